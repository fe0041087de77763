"""html: one self-contained page with the machine, the tables and every plot."""
import base64
import re

import samples
from conftest import rec, run_cli


def _images(page):
    return [base64.b64decode(m).decode() for m in
            re.findall(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', page)]


def test_single_file_page(tmp_path, write):
    out = tmp_path / "report.html"
    p = run_cli("html", write("run.json", samples.all_benches()), "-o", out)
    assert p.returncode == 0, p.stderr
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "Test CPU" in page and "haltpoll" in page and "xcall-bench test" in page
    for bench in ("pingpong", "matrix", "heatmap", "storm", "bringup", "kernel", "mystery"):
        assert f"<caption>{bench} (run.json)</caption>" in page
    svgs = _images(page)
    assert len(svgs) == 14                                   # every figure of `plot`
    assert any("physical limit" in s for s in svgs)
    assert any("2008 (old)" in s for s in svgs)
    # offline: nothing fetched from anywhere
    assert not re.search(r'(src|href)="(https?:)?//', page)
    assert "<script" not in page and "<link" not in page
    assert "Comparison" not in page                          # one file: nothing to compare
    assert 'id="summary"' in page and page.count('class="card figure-card') == 5


def test_two_files_page_has_comparison(tmp_path, write):
    a = write("old.json", [rec("storm", "ipistorm", 1000.0, unit="ms", n=1),
                           rec("storm", "only-old", 5.0, unit="ms", n=1)])
    b = write("new.json", [rec("storm", "ipistorm", 407.1, unit="ms", n=1)])
    out = tmp_path / "r.html"
    p = run_cli("html", a, b, "-o", out)
    assert p.returncode == 0, p.stderr
    page = out.read_text()
    assert "Comparison, normalised to old.json" in page
    assert "<td>0.41 [59.29]</td>" in page
    assert "Summary: 0 better, 0 worse, 0 within noise, 1 not tested for noise" in page
    assert "<th>new.json mean [pct imp]</th>" in page
    assert "storm only-old: only in old.json" in page
    assert "<th>old.json</th><th>new.json</th>" in page      # machine side by side
    assert len(_images(page)) == 2


def test_html_escapes_names(tmp_path, write):
    out = tmp_path / "r.html"
    p = run_cli("html", write("x.json", [rec("ipi", "<b>&", 10.0)]), "-o", out)
    assert p.returncode == 0, p.stderr
    page = out.read_text()
    assert "<b>&" not in page and "&lt;b&gt;&amp;" in page


def _full_doc(disturbed=None):
    """Every bench of samples and the wake chart, with one capped and one disturbed case."""
    d = samples.all_benches()
    d["results"] += samples.wake()["results"]
    for r in d["results"]:
        if r["case"] == "futex" and r["bench"] == "pingpong":
            r.setdefault("params", {})["capped"] = True
        if r["case"] == "pipe" and r["bench"] == "pingpong":
            r.setdefault("params", {})["disturbed"] = "other tasks took 48% of CPUs 0-1"
    if disturbed:
        d["host"]["disturbed"] = disturbed
    return d


def test_page_reads_in_order(tmp_path, write):
    out = tmp_path / "report.html"
    p = run_cli("html", write("run.json", _full_doc()), "-o", out)
    assert p.returncode == 0, p.stderr
    page = out.read_text()
    at = [page.index(x) for x in ('id="summary"', 'id="charts"', 'id="tables"', 'id="machine"')]
    assert at == sorted(at)
    summ = page[at[0]:at[1]]
    assert summ.count('data-figure="') == 6                  # the machine and five figures
    for key in ("machine", "limit", "call", "kernel", "wake", "seeds"):
        assert f'data-figure="{key}"' in summ
    assert "Test CPU" in summ and "Linux 6.1.0" in summ
    charts = page[at[1]:at[2]]
    benches = ["pingpong", "matrix", "bringup", "storm", "heatmap", "kernel", "ipi", "idle",
               "mystery", "wake"]
    assert re.findall(r'<figure class="chart" data-bench="([^"]+)"', charts) == benches
    assert charts.count("<p><b>What:</b>") == charts.count("<p><b>How to read it:</b>") == 10
    assert "mystery: each case&#x27;s value as xcall-bench reports it." in charts
    assert "(run.json)</figcaption>" not in charts
    tables = page[at[2]:at[3]]
    assert tables.count("<details") == 10 and "<details open" not in tables
    assert tables.count('data-name="pingpong-distribution"') == 1    # collapsed with its table
    assert len(_images(page)) == 15                          # 10 charts, 5 distributions


def test_marks_in_tables_and_captions(tmp_path, write):
    out = tmp_path / "report.html"
    assert run_cli("html", write("run.json", _full_doc()), "-o", out).returncode == 0
    page = out.read_text()
    assert '<tr class="marked"><td>futex</td>' in page
    assert "capped (stopped at <span class=\"nw\">--case-limit</span> before its count" in page
    assert "<th>marks</th>" in page
    assert '<td class="marks">capped</td>' in page            # one cause a kind: said below
    assert '<p class="note">capped: stopped at' in page
    assert "pingpong: 5 cases, 2 marked capped or disturbed" in page
    assert "<p class=\"marked\">Marked: capped (stopped at" in page
    assert "disturbed (other tasks took 48% of CPUs 0-1): pipe" in page
    assert 'class="banner"' not in page                      # the host was not disturbed


def test_disturbed_host_gets_a_banner(tmp_path, write):
    out = tmp_path / "report.html"
    why = "other tasks took 48% of CPUs 0-1"
    assert run_cli("html", write("run.json", _full_doc(why)), "-o", out).returncode == 0
    page = out.read_text()
    banner = page.index('<div class="banner" role="alert"><b>Disturbed run:</b> ' + why)
    assert banner < page.index('id="summary"')


def test_absent_family_in_summary(tmp_path, write):
    out = tmp_path / "r.html"
    assert run_cli("html", write("x.json", [rec("ipi", "self/total", 10.0)]), "-o", out) \
        .returncode == 0
    page = out.read_text()
    assert page.count('class="card figure-card absent"') == 5
    assert "it has no `pingpong` records" in page
