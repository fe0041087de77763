"""An output that cannot be written is refused before anything is read or drawn: exit 1,
one line, and the page never rendered."""
import pytest

from conftest import rec
from xcall_report import cli


def _never(*args, **kw):
    raise AssertionError("rendered although the output cannot be written")


@pytest.mark.parametrize("where", ["missing-dir", "is-a-dir", "file-as-dir"])
def test_html_refuses_an_unwritable_output_before_rendering(tmp_path, write, monkeypatch, capsys, where):
    from xcall_report import html
    monkeypatch.setattr(html, "page", _never)
    good = write("run.json", [rec("pingpong", "futex", 100.0)])
    (tmp_path / "plain").write_text("x")
    out = {"missing-dir": tmp_path / "nonexistent" / "o.html", "is-a-dir": tmp_path,
           "file-as-dir": tmp_path / "plain" / "o.html"}[where]
    assert cli.main(["html", good, "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("xcall-report: error: cannot write output"), err


def test_plot_refuses_an_outdir_under_a_file_before_drawing(tmp_path, write, monkeypatch, capsys):
    from xcall_report import plots
    monkeypatch.setattr(plots, "write_all", _never)
    (tmp_path / "plain").write_text("x")
    good = write("run.json", [rec("pingpong", "futex", 100.0)])
    assert cli.main(["plot", good, "-o", str(tmp_path / "plain" / "figs")]) == 1
    assert "cannot write output" in capsys.readouterr().err


def test_compare_refuses_a_missing_directory_before_comparing(tmp_path, write, monkeypatch):
    from xcall_report import compare
    monkeypatch.setattr(compare, "compare", _never)
    a = write("a.json", [rec("pingpong", "futex", 100.0)])
    b = write("b.json", [rec("pingpong", "futex", 110.0)])
    assert cli.main(["compare", a, b, "-o", str(tmp_path / "nonexistent" / "c.txt")]) == 1


def test_a_missing_plot_outdir_is_made(tmp_path, write):
    good = write("run.json", [rec("pingpong", "futex", 100.0)])
    assert cli.main(["plot", good, "-o", str(tmp_path / "new" / "figs")]) == 0
