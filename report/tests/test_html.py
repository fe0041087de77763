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
