"""compare: the numbers in every format equal what the inputs imply."""
import csv
import io

import pytest

from conftest import rec, run_cli
from xcall_report import compare, load, stats


def _cmp(write, *files):
    return compare.compare([load.load(write(f"{i}.json", recs)) for i, recs in enumerate(files)])


def _table(cmp, bench, case):
    return next(t for t in cmp.tables if (t.bench, t.case) == (bench, case))


def test_seed_000_table(write):
    """The seed's ipistorm numbers: 1.00 [0.00] and 0.41 [59.29]."""
    a = [rec("storm", "ipistorm", 1000.0, unit="ms", n=1)]
    b = [rec("storm", "ipistorm", 407.1, unit="ms", n=1)]
    cmp = _cmp(write, a, b)
    t = _table(cmp, "storm", "ipistorm")
    assert list(t.cells) == ["mean"]                   # a single number: mean only
    base, new = t.cells["mean"]
    assert (base.ratio, base.pct_imp) == (1.0, 0.0)
    assert new.ratio == pytest.approx(0.4071)
    assert new.pct_imp == pytest.approx(59.29)
    text = compare.format_text(cmp)
    assert "1.00 [0.00]" in text and "0.41 [59.29]" in text
    assert "Interpretation: Lower is better" in text


def test_higher_is_better(write):
    a = [rec("storm", "rate", 200.0, unit="ops/s", better="higher", n=1)]
    b = [rec("storm", "rate", 250.0, unit="ops/s", better="higher", n=1)]
    new = _table(_cmp(write, a, b), "storm", "rate").cells["mean"][1]
    assert new.ratio == 1.25 and new.pct_imp == pytest.approx(25.0)
    assert "Higher is better" in compare.format_text(_cmp(write, a, b))


def test_percentile_metrics(write):
    a = [rec("pingpong", "futex", 100.0, p50=80.0, p99=400.0)]
    b = [rec("pingpong", "futex", 50.0, p50=60.0, p99=800.0)]
    t = _table(_cmp(write, a, b), "pingpong", "futex")
    assert list(t.cells) == ["mean", "p50", "p99"]
    assert t.cells["mean"][1].pct_imp == pytest.approx(50.0)
    assert t.cells["p50"][1].ratio == pytest.approx(0.75)
    assert t.cells["p99"][1].ratio == pytest.approx(2.0)
    assert t.cells["p99"][1].pct_imp == pytest.approx(-100.0)


def test_repeats_mean_stddev_and_welch(write):
    a = [rec("ipi", "normal", v, repeat=i) for i, v in enumerate([100.0, 102.0, 98.0])]
    b = [rec("ipi", "normal", v, repeat=i) for i, v in enumerate([80.0, 81.0, 79.0])]
    c = [rec("ipi", "normal", v, repeat=i) for i, v in enumerate([99.0, 103.0, 101.0])]
    cmp = _cmp(write, a, b, c)
    base, fast, same = _table(cmp, "ipi", "normal").cells["mean"]
    assert base.mean == 100.0 and base.sd == pytest.approx(2.0)
    assert fast.ratio == pytest.approx(0.80) and fast.sd_ratio == pytest.approx(0.01)
    assert fast.p_value == pytest.approx(stats.welch([100, 102, 98], [80, 81, 79]))
    assert fast.test == "repeats" and fast.within_noise is False
    assert same.within_noise is True
    text = compare.format_text(cmp)
    assert "0.80 ± 0.01 [20.00]" in text
    assert "1.01 ± 0.02 [-1.00] ~" in text
    assert "Welch's t-test" in text
    assert "1.00 ± 0.02 [0.00]" in text


def test_zero_variance(write):
    a = [rec("bringup", "serial", 10.0, repeat=i, unit="ms", n=1) for i in range(3)]
    b = [rec("bringup", "serial", 10.0, repeat=i, unit="ms", n=1) for i in range(3)]
    c = [rec("bringup", "serial", 5.0, repeat=i, unit="ms", n=1) for i in range(3)]
    _, same, half = _table(_cmp(write, a, b, c), "bringup", "serial").cells["mean"]
    assert same.p_value == 1.0 and same.within_noise is True
    assert half.p_value == 0.0 and half.within_noise is False
    assert half.sd_ratio == 0.0 and half.pct_imp == pytest.approx(50.0)


def test_one_run_with_and_without_stddev(write):
    a = [rec("pingpong", "pipe", 1000.0, stddev=100.0, n=10000),
         rec("pingpong", "futex", 1000.0)]
    b = [rec("pingpong", "pipe", 1001.0, stddev=100.0, n=10000),
         rec("pingpong", "futex", 500.0)]
    cmp = _cmp(write, a, b)
    pipe = _table(cmp, "pingpong", "pipe").cells
    assert pipe["mean"][1].test == "samples"
    assert pipe["mean"][1].p_value == pytest.approx(
        stats.welch_summary(1000.0, 100.0, 10000, 1001.0, 100.0, 10000))
    assert pipe["mean"][1].within_noise is True
    assert pipe["p50"][1].p_value is None            # percentiles: nothing to test on
    futex = _table(cmp, "pingpong", "futex").cells["mean"][1]
    assert futex.p_value is None and futex.within_noise is None
    assert "not tested for noise" in compare.format_text(cmp)


def test_case_only_in_one_file_and_missing_cases(write):
    a = [rec("pingpong", "futex", 100.0), rec("pingpong", "pipe", 200.0),
         rec("ipi", "self/total", 50.0)]
    b = [rec("pingpong", "futex", 90.0), rec("pingpong", "eventfd", 70.0)]
    cmp = _cmp(write, a, b)
    assert [(t.bench, t.case) for t in cmp.tables] == [("pingpong", "futex")]
    assert "pingpong pipe: only in 0.json" in cmp.skipped
    assert "ipi self/total: only in 0.json" in cmp.skipped
    assert "pingpong eventfd: only in 1.json" in cmp.skipped
    for fmt in ("text", "markdown"):
        out = compare.FORMATS[fmt](cmp)
        assert "Not compared" in out and "eventfd: only in 1.json" in out


def test_zero_baseline_is_na(write):
    a = [rec("idle", "kicks", 0.0, unit="irq/op", n=1)]
    b = [rec("idle", "kicks", 3.0, unit="irq/op", n=1)]
    cmp = _cmp(write, a, b)
    assert _table(cmp, "idle", "kicks").cells["mean"][1].ratio is None
    assert "n/a" in compare.format_text(cmp)


def test_units_differ_not_compared(write):
    cmp = _cmp(write, [rec("x", "y", 1.0, unit="ns")], [rec("x", "y", 1.0, unit="cycles")])
    assert not cmp.tables and "units differ" in cmp.skipped[0]


def test_csv_numbers(write):
    a = [rec("ipi", "normal", v, repeat=i) for i, v in enumerate([100.0, 102.0, 98.0])]
    b = [rec("ipi", "normal", v, repeat=i) for i, v in enumerate([80.0, 81.0, 79.0])]
    rows = list(csv.DictReader(io.StringIO(compare.format_csv(_cmp(write, a, b)))))
    assert len(rows) == 6                             # 3 metrics x 2 files
    row = next(r for r in rows if r["metric"] == "mean" and r["file"] == "1.json")
    assert float(row["mean"]) == 80.0 and float(row["stddev"]) == 1.0
    assert float(row["ratio"]) == pytest.approx(0.8)
    assert float(row["pct_imp"]) == pytest.approx(20.0)
    assert row["better"] == "lower" and row["test"] == "repeats"
    assert row["within_noise"] == "false"


def test_markdown_table(write):
    a = [rec("storm", "ipistorm", 1000.0, unit="ms", n=1)]
    b = [rec("storm", "ipistorm", 407.1, unit="ms", n=1)]
    md = compare.format_markdown(_cmp(write, a, b))
    assert "### storm ipistorm" in md
    assert "| file | mean [pct imp] |" in md
    assert "| 1.json | 0.41 [59.29] |" in md
    assert "Lower is better for mean" in md


@pytest.mark.parametrize("fmt, needle", [("text", "0.50 [50.00]"), ("markdown", "| 0.50 [50.00] |"),
                                         ("csv", "0.5,50.0000")])
def test_cli_formats(write, tmp_path, fmt, needle):
    a = write("a.json", [rec("storm", "s", 10.0, unit="s", n=1)])
    b = write("b.json", [rec("storm", "s", 5.0, unit="s", n=1)])
    p = run_cli("compare", a, b, "--format", fmt)
    assert p.returncode == 0, p.stderr
    assert needle in p.stdout
    out = tmp_path / "out.txt"
    assert run_cli("compare", a, b, "--format", fmt, "-o", out).returncode == 0
    assert out.read_text() == p.stdout


def test_heavy_tail_is_not_within_noise(write):
    """A disturbed run's mean, carried by a few samples thousands of times the median, gives
    Welch's test a stddev so large that p >= 0.05 whatever the ratio; its interval (log
    scale) still lies far from the quiet run's, so the change is not called noise. The
    numbers are a real quiet and hog run of pingpong cacheline."""
    a = [rec("pingpong", "cacheline", 67.935, stddev=110.228, n=200, p50=54.0)]
    b = [rec("pingpong", "cacheline", 46286.1, stddev=435604.0, n=130, p50=227.0)]
    cell = _table(_cmp(write, a, b), "pingpong", "cacheline").cells["mean"][1]
    assert cell.ratio == pytest.approx(681.3, rel=1e-3)
    assert cell.p_value > stats.ALPHA                      # the test alone would say noise
    assert cell.interval[0] > cell.base_interval[1]        # the intervals do not overlap
    assert cell.within_noise is False and cell.verdict("lower") == "worse"
    text = compare.format_text(_cmp(write, a, b))
    assert "681.33 [-68032.92]" in text and "681.33 [-68032.92] ~" not in text


def test_overlapping_heavy_tails_stay_noise(write):
    """Two runs both carried by their tails, with intervals that overlap: within noise."""
    a = [rec("pingpong", "q", 789.88, stddev=8529.36, n=200)]
    b = [rec("pingpong", "q", 5387.83, stddev=50062.0, n=200)]
    cell = _table(_cmp(write, a, b), "pingpong", "q").cells["mean"][1]
    assert stats.overlap(cell.interval, cell.base_interval)
    assert cell.within_noise is True


def test_two_repeats_each_far_apart_are_not_noise(write):
    """With two repeats a side, Welch's test has about one degree of freedom and rarely
    rejects; repeats that lie 10,000 times apart are still no noise."""
    a = [rec("ipi", "n", v, repeat=i) for i, v in enumerate([1.0, 1.1])]
    b = [rec("ipi", "n", v, repeat=i) for i, v in enumerate([10000.0, 30000.0])]
    cell = _table(_cmp(write, a, b), "ipi", "n").cells["mean"][1]
    assert cell.p_value > stats.ALPHA and cell.within_noise is False


def test_mean_interval():
    lo, hi = stats.mean_interval(100.0, 10.0, 100)
    assert lo < 100.0 < hi and hi / 100.0 == pytest.approx(100.0 / lo)
    assert stats.mean_interval(100.0, 10.0, 1) is None
    assert stats.mean_interval(0.0, 1.0, 10)[0] < 0.0        # not positive: linear
    assert stats.t_critical(1) == pytest.approx(12.706, rel=1e-3)
    assert stats.t_critical(1000) == pytest.approx(1.962, rel=1e-3)
    assert stats.overlap((1, 2), (2, 3)) and not stats.overlap((1, 2), (2.5, 3))


def _three_way(write):
    a = [rec("pingpong", "futex", v, repeat=i) for i, v in enumerate([100.0, 102.0, 98.0])] + \
        [rec("pingpong", "pipe", v, repeat=i) for i, v in enumerate([100.0, 102.0, 98.0])] + \
        [rec("pingpong", "eventfd", v, repeat=i) for i, v in enumerate([100.0, 102.0, 98.0])] + \
        [rec("storm", "s", 1.0, unit="s", n=1)] + [rec("ipi", "only-a", 3.0)]
    b = [rec("pingpong", "futex", v, repeat=i) for i, v in enumerate([80.0, 81.0, 79.0])] + \
        [rec("pingpong", "pipe", v, repeat=i) for i, v in enumerate([120.0, 121.0, 119.0])] + \
        [rec("pingpong", "eventfd", v, repeat=i) for i, v in enumerate([99.0, 103.0, 101.0])] + \
        [rec("storm", "s", 0.5, unit="s", n=1)]
    return write("a.json", a), write("b.json", b)


def test_summary_line_counts(write):
    a, b = _three_way(write)
    p = run_cli("compare", a, b)
    assert p.returncode == 0, p.stderr
    last = p.stdout.rstrip().splitlines()[-1]
    assert last == ("Summary: 1 better, 1 worse, 1 within noise, 1 not tested for noise (on "
                    "the mean); 1 not compared.")
    md = run_cli("compare", a, b, "--format", "markdown").stdout.rstrip().splitlines()[-1]
    assert md == last
    c = run_cli("compare", a, b, "--format", "csv")
    assert c.stdout.startswith("bench,case,") and "Summary" not in c.stdout
    assert last in c.stderr


@pytest.mark.parametrize("args, cases", [
    (["--bench", "ping"], ["futex", "pipe", "eventfd"]),               # substring
    (["--bench", "p*g"], ["futex", "pipe", "eventfd"]),                # glob: whole name
    (["--bench", "i*"], []),                  # a glob fits the whole name: not pingpong, ipi
    (["--case", "p"], ["pipe"]),                                        # substring, not prefix
    (["--case", "?ipe", "--case", "futex"], ["futex", "pipe"]),         # any pattern fits
    (["--bench", "storm", "--case", "s"], ["s"]),                       # both must fit
])
def test_filters(write, args, cases):
    a, b = _three_way(write)
    p = run_cli("compare", a, b, *args)
    got = [ln.split(": ", 1)[1].split(" ", 1)[1] for ln in p.stdout.splitlines()
           if ln.startswith("Test          :")]
    assert sorted(got) == sorted(cases)
    assert p.returncode == (0 if cases else 3)
    assert " ".join(args) in p.stdout.rstrip().splitlines()[-1]


def test_nothing_common_says_so_and_exits_3(write):
    a = write("pp.json", [rec("pingpong", "futex", 1.0), rec("pingpong", "pipe", 2.0)])
    b = write("wk.json", [rec("wake", "futex/hot", 1.0)])
    p = run_cli("compare", a, b)
    assert p.returncode == 3
    assert "No case is common to pp.json, wk.json: nothing was compared (3 cases not " \
        "compared)." in p.stdout
    assert "nothing was compared" in p.stderr
    assert p.stdout.rstrip().splitlines()[-1].startswith("Summary: 0 better, 0 worse")


def test_marked_records_are_marked_in_every_format(write):
    a = [rec("storm", "s", 1.0, unit="s", n=1)]
    b = [rec("storm", "s", 0.5, unit="s", n=1,
             params={"capped": True, "disturbed": "other tasks took 48% of CPUs 0-1"})]
    cmp = _cmp(write, a, b)
    text = compare.format_text(cmp)
    assert "marks" in text and "capped, disturbed" in text
    assert "Note          : 1.json: capped (stopped at --case-limit" in text
    assert "disturbed: other tasks took 48% of CPUs 0-1" in text
    assert "1 from capped or disturbed records" in text.splitlines()[-1]
    row = list(csv.DictReader(io.StringIO(compare.format_csv(cmp))))[1]
    assert row["marks"].startswith("capped (") and "48% of CPUs" in row["marks"]


def test_disturbed_run_is_named(write):
    from conftest import doc
    d = doc([rec("storm", "s", 0.5, unit="s", n=1)])
    d["host"]["disturbed"] = "other tasks took 48% of CPUs 0-1"
    p = run_cli("compare", write("a.json", [rec("storm", "s", 1.0, unit="s", n=1)]),
                write("b.json", d))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    at = lines.index("Disturbed runs (their figures may say more about the other work than "
                     "about the code):")
    assert lines[at + 1] == "  b.json: other tasks took 48% of CPUs 0-1"
    assert lines[-1].startswith("Summary:")
