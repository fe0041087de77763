"""Reference machines: shipped results files, --reference, docs/machines.md, adding one."""
import json
import os
import re
import shutil

import pytest

import samples
from conftest import run_cli
from xcall_report import machines
from xcall_report.load import InputError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "machines.md")
SHIPPED = ["intel16-kvm-2026-11-26", "epyc2-kvm-2026-11-26"]


def test_the_machines_ship_and_load():
    assert machines.names() == SHIPPED
    for name in SHIPPED:
        res = machines.load_machine(name)
        assert res.label == name and res.records
        assert machines.entry(name)["about"]
    assert machines.load_machine(SHIPPED[0]).host["cpus_online"] == 16


def test_docs_machines_md_is_current():
    """docs/machines.md is what `make machines-doc` writes from the files."""
    with open(DOC, encoding="utf-8") as f:
        assert f.read() == machines.markdown(), "docs/machines.md is stale: run make machines-doc"


def test_each_machines_ratios_are_its_own():
    """The Intel run's figures, as its README gives them: paired ratio 1.56x, kernel IPI 10x
    the call beside it, bringup 16x."""
    got = {label: v for label, _, v in machines.ratios(machines.load_machine(SHIPPED[0]))}
    assert got["cache-line round trip (the limit), p50"] == "143 ns"
    assert got["waiting call / limit, paired"] == "1.56×"
    assert got["kernel IPI / libxcall's call, same probe"] == "10×"
    assert got["bringup: parallel speedup"] == "16×"


def test_html_with_a_reference(tmp_path):
    src = tmp_path / "run.json"
    d = samples.one_cpu_run()                       # small: the page renders fast
    d["results"] += [r for r in samples.quiet_run()["results"] if r["bench"] == "pingpong"
                     and r["case"] in ("cacheline", "libxcall-polling")]
    d["results"] = [r for r in d["results"] if not (r["bench"] == "pingpong"
                                                    and r["case"] == "all")]
    src.write_text(json.dumps(d))
    out = tmp_path / "o.html"
    p = run_cli("html", src, "-o", out, "--reference", SHIPPED[0])
    assert p.returncode == 0, p.stderr
    page = out.read_text()
    m = re.search(r'<div id="references">(.*?)</div>', page, re.S)
    assert m, "no reference table"
    table = m.group(1)
    assert f"<th>{SHIPPED[0]}</th>" in table and "<th>run.json</th>" in table
    # times side by side; no row divides one machine's time by another's
    assert "<td>143 ns</td>" in table and "<td>20 ns</td>" in table     # Intel's, this run's
    assert "<td>1.56×</td>" in table and "<td>3.09×</td>" in table       # each one's own
    assert "times side by side" in table and "ratio within each run" in table
    assert not re.search(r"(?i)(run\.json|this run) ?/ ?" + SHIPPED[0], table)
    assert page.index('id="references"') < page.index('id="charts"')   # in the summary


def test_an_unknown_reference_is_refused_at_once(tmp_path):
    src = tmp_path / "run.json"
    src.write_text(json.dumps(samples.one_cpu_run()))
    p = run_cli("html", src, "-o", tmp_path / "o.html", "--reference", "nosuch")
    assert p.returncode == 2 and "no reference machine 'nosuch'; shipped: " in p.stderr
    assert not (tmp_path / "o.html").exists()


def test_add_a_machine_with_one_command(tmp_path):
    """A user's machine goes in with one command, and the table is rewritten with it."""
    d = tmp_path / "machines"
    shutil.copytree(machines.DIR, d)
    src = tmp_path / "mine.json"
    src.write_text(json.dumps(samples.quiet_run()))
    doc = tmp_path / "machines.md"
    machines.add(str(src), "mybox", "my box, quiet", directory=str(d), doc=str(doc))
    assert machines.names(str(d)) == SHIPPED + ["mybox"]
    assert "| `mybox` |" in doc.read_text() and "- `mybox`: my box, quiet" in doc.read_text()
    with pytest.raises(InputError, match="exists already"):
        machines.add(str(src), "mybox", "again", directory=str(d))
    with pytest.raises(InputError, match="bad machine name"):
        machines.add(str(src), "My Box", "x", directory=str(d))
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(InputError):
        machines.add(str(bad), "badbox", "x", directory=str(d))
    assert machines.names(str(d)) == SHIPPED + ["mybox"]


def test_machines_cli_lists_them():
    p = run_cli("machines")
    assert p.returncode == 0
    assert [line.split(":")[0] for line in p.stdout.splitlines()] == SHIPPED
