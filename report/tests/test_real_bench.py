"""The real xcall-bench: tiny runs (pingpong, wake), then every xcall-report command on them."""
import json
import os
import re
import subprocess

import pytest

from conftest import run_cli
from xcall_report import load, plots

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# the Makefile passes the binary of its BUILD; run by hand, the default build's
BENCH = os.environ.get("XCALL_BENCH") or os.path.join(ROOT, "build", "xcall-bench")


def run_bench(tmp_path_factory, sub, *args):
    """xcall-bench SUB ARGS --repeat 2 into a results file; skipped where it cannot run."""
    if not os.access(BENCH, os.X_OK):
        pytest.skip(f"{BENCH} is not built yet (make builds it)")
    if os.cpu_count() is None or len(os.sched_getaffinity(0)) < 2:
        pytest.skip(f"{sub} needs 2 CPUs")
    out = tmp_path_factory.mktemp("bench") / f"{sub}.json"
    p = subprocess.run([BENCH, sub, *args, "--repeat", "2", "--json", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"xcall-bench failed: {p.stderr[-2000:]}"
    return str(out)


@pytest.fixture(scope="module")
def bench_file(tmp_path_factory):
    return run_bench(tmp_path_factory, "pingpong", "--iterations", "1000")


def test_real_file_loads(bench_file):
    r = load.load(bench_file)
    assert r.benches() == ["pingpong"]
    assert any("cacheline" in c for c in r.cases("pingpong"))
    assert all(len(r.runs("pingpong", c)) == 2 for c in r.cases("pingpong"))
    raw = json.load(open(bench_file))
    assert len(r.records) + len(r.warnings) == len(raw["results"])


def test_real_compare_plot_html(bench_file, tmp_path):
    p = run_cli("compare", bench_file, bench_file, "--format", "csv")
    assert p.returncode == 0, p.stderr
    rows = [ln.split(",") for ln in p.stdout.splitlines()[1:]]
    assert rows and all(float(r[9]) == pytest.approx(1.0) for r in rows if r[9])
    p = run_cli("plot", bench_file, "-o", tmp_path / "plots")
    assert p.returncode == 0, p.stderr
    svg = (tmp_path / "plots" / "pingpong.svg").read_text()
    # the limit's line is drawn; named "as measured" when a noisy case came out below it
    assert re.search(r"(physical limit|cache-line limit as measured) \(cacheline\)", svg)
    p = run_cli("html", bench_file, "-o", tmp_path / "r.html")
    assert p.returncode == 0, p.stderr
    assert "pingpong" in (tmp_path / "r.html").read_text()


@pytest.fixture(scope="module")
def wake_file(tmp_path_factory):
    return run_bench(tmp_path_factory, "wake", "--iterations", "50")


def test_real_wake_chart(wake_file):
    r = load.load(wake_file)
    mechs = list(dict.fromkeys(c.split("/")[0] for c in r.cases("wake")))
    fig = dict(plots.figures(r))["wake"]
    lat = fig.axes[0]
    assert [t.get_text().split(" (")[0] for t in lat.get_yticklabels()] == mechs
    assert lat.get_xscale() == "log"
    # every case without figures is named, with xcall-bench's reason, under the chart
    note = " ".join(fig._supxlabel.get_text().split())       # lines wrapped anywhere
    for rec in r.records:
        if rec.skipped is not None:
            assert rec.case in note and " ".join(rec.skipped.split()) in note


def test_real_wake_compare_plot_html(wake_file, tmp_path):
    p = run_cli("compare", wake_file, wake_file)
    assert p.returncode == 0, p.stderr
    assert "Test          : wake futex/hot/wake" in p.stdout
    p = run_cli("plot", wake_file, "-o", tmp_path / "plots")
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(tmp_path / "plots")) == ["wake.png", "wake.svg"]
    assert "libxcall-sleeping" in (tmp_path / "plots" / "wake.svg").read_text()
    p = run_cli("html", wake_file, "-o", tmp_path / "r.html")
    assert p.returncode == 0, p.stderr
    assert "<td>futex/parked/wake</td>" in (tmp_path / "r.html").read_text()
