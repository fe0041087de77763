"""plot: every bench gets its chart, written as non-empty PNG and SVG, with the right series."""
import os

import numpy as np
import pytest

import samples
from conftest import load_doc, rec, run_cli
from xcall_report import load, plots


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    return load_doc(tmp_path_factory, "full", samples.all_benches())


@pytest.fixture(scope="module")
def figs(full):
    """Drawn once for the module; the tests only read them."""
    return dict(plots.figures(full))


def _bars(ax):
    return [p for c in ax.containers for p in getattr(c, "patches", [])]


def test_one_figure_per_bench_and_distributions(figs):
    assert list(figs) == ["pingpong", "pingpong-distribution", "matrix", "bringup",
                          "bringup-distribution", "storm", "heatmap", "kernel",
                          "kernel-distribution", "ipi", "ipi-distribution", "idle",
                          "idle-distribution", "mystery"]


def _labels_and_values(ax):
    bars = _bars(ax)
    names = [t.get_text() for t in ax.get_yticklabels()]
    return names, [b.get_width() for b in bars]


def test_pingpong_log_bars_with_physical_limit(figs, full):
    ax = figs["pingpong"].axes[0]
    assert ax.get_xscale() == "log"
    names, widths = _labels_and_values(ax)
    assert names == full.cases("pingpong")
    assert widths == [full.runs("pingpong", c)[0].stats["p50"] for c in names]
    limit = full.runs("pingpong", "cacheline")[0].stats["p50"]
    vlines = [ln for ln in ax.get_lines() if "physical limit" in ln.get_label()]
    assert len(vlines) == 1 and list(vlines[0].get_xdata()) == [limit, limit]
    assert _bars(ax)[0].get_facecolor()[:3] != _bars(ax)[1].get_facecolor()[:3]
    assert "(ns)" in ax.get_xlabel()


def test_kernel_limit_found(figs):
    ax = figs["kernel"].axes[0]
    assert any("cacheline-limit" in ln.get_label() for ln in ax.get_lines())


def test_matrix_scaling_curves(figs, full):
    fig = figs["matrix"]
    axes = [a for a in fig.axes if a.get_visible() and a.get_xlabel()]
    assert [a.get_title() for a in axes] == list(samples.MATRIX_OPS)
    ax = axes[3]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    assert set(lines) == {"libxcall (new)", "2008 (old)"}
    new = lines["libxcall (new)"]
    assert list(new.get_xdata()) == [1, 2, 3, 4]
    expect = [full.runs("matrix", f"single-nowait/libxcall/{n}")[0].stats["mean"]
              for n in (1, 2, 3, 4)]
    assert list(new.get_ydata()) == pytest.approx(expect)
    assert ax.get_xlabel() == "calling CPUs (count)" and "(s)" in ax.get_ylabel()
    twins = [a for a in fig.axes if "speedup" in a.get_ylabel()]
    assert len(twins) == 4
    speed = twins[3].get_lines()[0]
    assert list(speed.get_ydata()) == pytest.approx(
        [full.runs("matrix", f"single-nowait/speedup/{n}")[0].stats["mean"] for n in (1, 2, 3, 4)])
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["2008 (old)", "libxcall (new)", "speedup, old / new (right axis)"] or \
        legend == ["libxcall (new)", "2008 (old)", "speedup, old / new (right axis)"]


def test_matrix_issue_style_names(write):
    r = load.load(write("m.json", [
        rec("matrix", f"call-single-nowait/callers={k}/{impl}", 0.1 * k, unit="s", n=1)
        for k in (1, 2) for impl in ("libxcall", "pre2008")]))
    ax = dict(plots.figures(r))["matrix"].axes[0]
    assert ax.get_title() == "call-single-nowait"
    assert {ln.get_label() for ln in ax.get_lines()} == {"libxcall (new)", "pre2008 (old)"}


def test_bringup_serial_vs_parallel(figs):
    ax = figs["bringup"].axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["serial", "parallel"]
    heights = [[b.get_height() for b in c] for c in ax.containers]
    assert heights == [[pytest.approx(10.8)], [pytest.approx(3.6)]]    # p50, ns shown as ms
    assert "(ms)" in ax.get_ylabel()
    assert "speedup 3×" in ax.get_title()
    assert [t.get_text() for t in ax.texts] == ["10.8 ms", "3.6 ms"]


def test_bringup_grouped_by_cpus(write):
    r = load.load(write("b.json", [rec("bringup", f"{m}/cpus={c}", v, unit="ms", n=1)
                                   for m, v in (("serial", 12.0), ("parallel", 4.0))
                                   for c in (2, 4)]))
    ax = dict(plots.figures(r))["bringup"].axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["cpus=2", "cpus=4"]
    assert [[b.get_height() for b in c] for c in ax.containers] == [[12.0, 12.0], [4.0, 4.0]]


def test_storm_normalised(figs):
    ax = figs["storm"].axes[0]
    assert [b.get_width() for b in _bars(ax)] == pytest.approx([1.0, 0.6, 0.4071])
    texts = [t.get_text() for t in ax.texts]
    assert texts == ["1.00 [0.00]", "0.60 [40.00]", "0.41 [59.29]"]
    assert "ablate-elide+notify" in ax.get_xlabel()


def test_heatmap_grid(figs, full):
    fig = figs["heatmap"]
    maps = [a for a in fig.axes if a.images]
    assert [a.get_title() for a in maps] == ["cacheline (physical limit)", "libxcall"]
    grid = maps[1].images[0].get_array()
    assert grid.shape == (4, 4)
    assert np.ma.getmaskarray(grid)[2, 2]                       # no self-to-self case
    assert float(grid[0, 3]) == full.runs("heatmap", "libxcall/0->3")[0].stats["p50"]
    assert float(maps[0].images[0].get_array()[1, 0]) == \
        full.runs("heatmap", "cacheline/1->0")[0].stats["p50"]
    assert "243" in [t.get_text() for t in maps[1].texts]      # values written in cells
    assert maps[0].get_xlabel().startswith("to CPU") and maps[0].get_ylabel().startswith("from")


def test_heatmap_issue_style_names(write):
    r = load.load(write("h.json", [rec("heatmap", f"{g}from={a}/to={b}", 100.0 + a, p50=100.0 + a)
                                   for g in ("", "limit/") for a, b in ((0, 1), (1, 0))]))
    maps = [a for a in dict(plots.figures(r))["heatmap"].axes if a.images]
    assert [a.get_title() for a in maps] == ["xcall", "limit (physical limit)"]
    assert float(maps[0].images[0].get_array()[1, 0]) == 101.0


def test_generic_chart_for_unknown_bench(figs):
    ax = figs["mystery"].axes[0]
    names, widths = _labels_and_values(ax)
    assert names == ["thing/one"] and widths == [3.5]             # n=1: the mean, no whisker
    assert "ops/s" in ax.get_xlabel() and "higher is better" in ax.get_title()


def test_distribution_series(figs, full):
    ax = figs["ipi-distribution"].axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    assert list(lines) == ["self/total", "normal/total", "broadcast/total"]
    s = full.runs("ipi", "normal/total")[0].stats
    assert list(lines["normal/total"].get_ydata()) == [s[k] for k in ("min", "p50", "p90", "p99", "max")]
    assert ax.get_yscale() == "log" and "(ns)" in ax.get_ylabel()


def test_odd_case_names_fall_back_to_generic(write):
    r = load.load(write("odd.json", [rec("matrix", "weird", 1.0, n=1, unit="s"),
                                     rec("heatmap", "from=x/to=y", 2.0),
                                     rec("bringup", "everything", 3.0, unit="ms", n=1),
                                     rec("heatmap", "from=-1/to=-2", 2.0, repeat=1)]))
    figs = dict(plots.figures(r))
    for bench in ("matrix", "heatmap", "bringup"):
        assert getattr(figs[bench], "xcall_generic", False)


def test_repeats_are_averaged(write):
    r = load.load(write("r.json", [rec("idle", "halt", v, repeat=i)
                                   for i, v in enumerate([100.0, 200.0])]))
    fig = dict(plots.figures(r))["idle"]
    assert [b.get_width() for b in _bars(fig.axes[0])] == [pytest.approx(135.0)]
    assert "mean of 2 repeats" in " ".join(fig._suptitle.get_text().split())


def test_files_written_non_empty_with_series(tmp_path, write):
    out = tmp_path / "plots"
    p = run_cli("plot", write("full.json", samples.all_benches()), "-o", out)
    assert p.returncode == 0, p.stderr
    written = sorted(os.listdir(out))
    for bench in ("pingpong", "matrix", "bringup", "storm", "heatmap", "kernel", "ipi", "idle",
                  "mystery", "pingpong-distribution"):
        for ext in ("png", "svg"):
            assert f"{bench}.{ext}" in written
            assert (out / f"{bench}.{ext}").stat().st_size > 2000
    assert (out / "matrix.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (out / "pingpong.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    for case in ("cacheline", "libxcall-polling", "pipe", "physical limit"):
        assert case in svg                                 # text kept as text in SVG
    assert "2008 (old)" in (out / "matrix.svg").read_text()
    assert sorted(p.stdout.split()) == sorted(str(out / f) for f in written)


def test_plot_file_name_is_safe(tmp_path, write):
    r = load.load(write("x.json", [rec("kmod/ipi storm", "a", 1.0)]))
    paths = plots.write_all(r, tmp_path)
    assert {os.path.basename(p) for p in paths} >= {"kmod_ipi_storm.png", "kmod_ipi_storm.svg"}


def test_kernel_borrows_the_limit_of_pingpong(write):
    r = load.load(write("k.json", [rec("pingpong", "cacheline", 100.0, p50=90.0),
                                   rec("kernel", "compare/kernel-ipi", 5000.0),
                                   rec("kernel", "compare/libxcall-polling", 200.0)]))
    ax = dict(plots.figures(r))["kernel"].axes[0]
    limit = [ln for ln in ax.get_lines() if "physical limit" in ln.get_label()]
    assert len(limit) == 1 and list(limit[0].get_xdata()) == [90.0, 90.0]
    assert "pingpong cacheline" in ax.get_title()


def test_no_limit_anywhere_is_said(write):
    r = load.load(write("k.json", [rec("kernel", "compare/kernel-ipi", 5000.0)]))
    ax = dict(plots.figures(r))["kernel"].axes[0]
    assert "no physical-limit case" in ax.get_title()


def _heatmap_records(cpus, classes=True):
    """Every ordered pair of cpus, both kinds, and the summary rows xcall-bench writes."""
    out = []
    for a in cpus:
        for b in cpus:
            if a != b:
                for g, base in (("cacheline", 60.0), ("libxcall", 200.0)):
                    v = base + abs(a - b)
                    out.append(rec("heatmap", f"{g}/{a}->{b}", v, p50=v,
                                   params={"from": a, "to": b, "class": "same-node"}))
    if classes:
        for g, lo in (("libxcall", 201.0), ("cacheline", 61.0)):
            for cls, k in (("same-node", 2), ("smt", 1)):
                out.append(rec("heatmap", f"summary/{g}/{cls}", lo * k, n=len(cpus) * k,
                               p50=lo * k, min=lo, max=lo * 3,
                               params={"class": cls, "pairs": "all"}))
    return out


def test_heatmap_128_cpus_thinned_labels(write):
    r = load.load(write("h128.json", _heatmap_records(range(128))))
    fig = dict(plots.figures(r))["heatmap"]
    assert "p50 from CPU to CPU" in fig._suptitle.get_text()    # not the generic chart
    maps = [a for a in fig.axes if a.images]
    assert [a.get_title() for a in maps] == ["cacheline (physical limit)", "libxcall"]
    for ax in maps:
        assert ax.images[0].get_array().shape == (128, 128)
        xs = [t.get_text() for t in ax.get_xticklabels()]
        ys = [t.get_text() for t in ax.get_yticklabels()]
        assert xs == ys == [str(c) for c in range(0, 128, 4)]   # every 4th CPU, 32 labels
        assert not ax.texts                                     # no values in 16k cells
        assert "one CPU in 4 labelled" in ax.get_xlabel()
    assert len(fig.axes) == 4                                   # a colour bar per panel
    assert all("p50 time" in a.get_ylabel() for a in fig.axes if not a.images)
    w, h = fig.get_size_inches()
    assert 20 <= w <= 30 and 10 <= h <= 14
    # summary rows go under their panel, closest class first, and not into the grid
    lines = maps[1].get_xlabel().splitlines()
    assert lines[1].startswith("smt: 128 pairs") and lines[2].startswith("same-node: 256 pairs")


def test_heatmap_sampled_cpus_keep_their_numbers(write):
    cpus = list(range(0, 64, 8))                               # --pairs every:8 of 64
    r = load.load(write("hs.json", _heatmap_records(cpus, classes=False)))
    ax = [a for a in dict(plots.figures(r))["heatmap"].axes if a.images][1]
    assert ax.images[0].get_array().shape == (8, 8)
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(c) for c in cpus]
    assert float(ax.images[0].get_array()[1, 2]) == 200.0 + 8
    assert ax.texts                                             # few CPUs: values written


def test_heatmap_tick_step():
    assert [plots._tick_step(n) for n in (2, 32, 33, 64, 128, 512)] == [1, 1, 2, 2, 4, 16]


def test_zero_is_shown_on_a_log_axis(write):
    """ipi's dry-run delivery is 0 ns: a log axis has no 0, so the value is written at the
    axis' edge with a tick instead of vanishing."""
    r = load.load(write("z.json", [rec("ipi", "dry-run/delivery", 0.0, p50=0.0, p99=0.0),
                                   rec("ipi", "normal/total", 2900.0),
                                   rec("ipi", "self/total", 30.0)]))
    ax = dict(plots.figures(r))["ipi"].axes[0]
    assert ax.get_xscale() == "log"
    texts = [t.get_text() for t in ax.texts]
    assert texts[0] == "0 ns (no bar: log axis)"
    assert len(texts) == 3                                 # each value written once
    edge = [ln for ln in ax.get_lines() if ln.get_label() == "_zero"]
    assert len(edge) == 1 and list(edge[0].get_ydata()) == [0]


def test_one_value_dwarfing_the_rest_gets_a_log_axis(write):
    """storm's ablate-notify at 175x the baseline (a disturbed run) on a linear axis would
    squash every other bar; one that does not dwarf them stays linear."""
    names = ["ablate-elide+notify", "ablate-notify", "ablate-elide", "ablate-none"]
    big = load.load(write("b.json", [rec("storm", c, v, unit="s", n=1) for c, v in
                                      zip(names, [1.0, 174.96, 0.08, 0.09])]))
    ax = dict(plots.figures(big))["storm"].axes[0]
    assert ax.get_xscale() == "log" and "log scale" in ax.get_xlabel()
    assert "174.96 [-17396.00]" in [t.get_text() for t in ax.texts]
    small = load.load(write("s.json", [rec("storm", c, v, unit="s", n=1) for c, v in
                                        zip(names, [1.0, 0.6, 0.08, 0.09])]))
    assert dict(plots.figures(small))["storm"].axes[0].get_xscale() == "linear"
    assert plots.dwarfs([1, 1, 1, 100]) and not plots.dwarfs([1, 2, 3, 40])
    assert plots.dwarfs([0, 0, 0.5, 1651], floor=1.0) and \
        not plots.dwarfs([0, 0, 0.5, 17.5], floor=1.0)


def test_capped_and_disturbed_cases_are_marked_in_charts(write):
    why = "other tasks took 48% of CPUs 0-1"
    r = load.load(write("m.json", [
        rec("pingpong", "cacheline", 60.0),
        rec("pingpong", "futex", 5000.0, params={"capped": True}),
        rec("pingpong", "pipe", 7000.0, params={"disturbed": why}),
        rec("pingpong", "pipe", 7100.0, repeat=1)]          # one repeat marks the case
        + [rec("matrix", f"all-wait/{impl}/{k}", 0.1 * k, unit="s", n=1,
               params={"capped": k == 2 and impl == "libxcall"})
           for impl in ("2008", "libxcall") for k in (1, 2)]))
    figs = dict(plots.figures(r))
    ax = figs["pingpong"].axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == \
        ["cacheline", "futex [capped]", "pipe [disturbed]"]
    assert [plots.is_marked(p) for p in _bars(ax)] == [False, True, True]
    assert not any(p.get_hatch() for p in _bars(ax))       # hatching means RES, in wake
    note = figs["pingpong"]._supxlabel.get_text()
    assert "capped (stopped at --case-limit" in note and f"disturbed ({why}): pipe" in note
    rings = [ln for ln in figs["matrix"].axes[0].get_lines()
             if ln.get_label() == "capped or disturbed"]
    assert len(rings) == 1 and list(rings[0].get_xdata()) == [2]
    assert "capped or disturbed" in [t.get_text() for t in figs["matrix"].legends[0].get_texts()]


def test_a_mark_every_case_carries_is_said_once(write):
    """A run disturbed throughout: no bar hatched (it would hide every colour), the note says
    every case; a capped case among them is still marked apart. Unmeasured cases, which
    carry no marks, do not count."""
    why = "other tasks took 99% of the CPUs"
    r = load.load(write("all.json", [
        rec("ipi", "a", 10.0, params={"disturbed": why}),
        rec("ipi", "b", 20.0, params={"disturbed": why, "capped": True}),
        rec("ipi", "c", 30.0, params={"disturbed": why}),
        rec("ipi", "d", 0.0, n=0, p50=0.0, p90=0.0, p99=0.0, max=0.0, min=0.0,
            params={"skipped": "not here"})]))
    fig = dict(plots.figures(r))["ipi"]
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b [capped]", "c", "d"]
    assert [plots.is_marked(p) for p in _bars(ax)] == [False, True, False]   # d: no bar
    assert "skipped: not here" in [t.get_text() for t in ax.texts]
    note = fig._supxlabel.get_text()
    assert f"disturbed ({why}): every case measured, so none is marked apart" in note
    assert "capped (stopped at --case-limit before its count: fewer operations than asked): b" \
        in note
