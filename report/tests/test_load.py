"""Loading: valid files load; every kind of bad input exits 2 with one clear line."""
import json

import pytest

from conftest import doc, rec, run_cli
from xcall_report import load


def test_valid_file_loads(write):
    p = write("a.json", [rec("pingpong", "futex", 100.0, stddev=5.0),
                         rec("pingpong", "futex", 110.0, repeat=1),
                         rec("storm", "baseline", 2.0, unit="s", n=1)])
    r = load.load(p)
    assert r.label == "a.json"
    assert r.benches() == ["pingpong", "storm"]
    assert [x.repeat for x in r.runs("pingpong", "futex")] == [0, 1]
    first = r.runs("pingpong", "futex")[0]
    assert first.stats["mean"] == 100.0 and first.stats["stddev"] == 5.0
    assert r.host["cpu_model"] == "Test CPU"


def test_null_statistic_skips_record_with_warning(write):
    bad = rec("ipi", "dry-run/total", 10.0)
    bad["p99"] = None
    r = load.load(write("a.json", [bad, rec("ipi", "self/total", 20.0)]))
    assert [x.case for x in r.records] == ["self/total"]
    assert "no value for p99" in r.warnings[0]


def test_same_base_name_gets_full_path(tmp_path, write):
    a = write("a.json", [rec("x", "y", 1.0)])
    (tmp_path / "d").mkdir()
    b = tmp_path / "d" / "a.json"
    b.write_text(open(a).read())
    labels = [r.label for r in load.load_all([a, str(b)])]
    assert labels[0] != labels[1]


def _text(tmp_path, name, content):
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(p)


GOOD = json.dumps(doc([rec("pingpong", "futex", 100.0)]), indent=1)


def _without(field):
    d = doc([rec("pingpong", "futex", 100.0)])
    del d["results"][0][field]
    return json.dumps(d)


BAD = {
    "not-json": ("hello, world\n", "not valid JSON"),
    "binary": (b"\x89PNG\r\n\x1a\n\x00\xff", "not"),
    "empty": ("", "empty file"),
    "truncated": (GOOD[: len(GOOD) // 2], "truncated"),
    "truncated-in-string": (GOOD[: GOOD.index("futex") + 2], "truncated"),
    "a-list": ("[1, 2, 3]", "not an xcall results file"),
    "other-json": ('{"name": "package.json", "version": "1.0"}', "not an xcall results file"),
    "schema-2": (json.dumps(dict(doc([rec("a", "b", 1.0)]), schema_version=2)),
                 "unknown schema_version 2"),
    "schema-string": (json.dumps(dict(doc([rec("a", "b", 1.0)]), schema_version="1")),
                      "unknown schema_version"),
    "no-host": (json.dumps({k: v for k, v in doc([rec("a", "b", 1.0)]).items() if k != "host"}),
                "host"),
    "no-records": (json.dumps(doc([])), "no usable record"),
    "missing-mean": (_without("mean"), "lacks field(s) mean"),
    "missing-better": (_without("better"), "lacks field(s) better"),
    "missing-repeat": (_without("repeat"), "lacks field(s) repeat"),
    "string-number": (json.dumps(doc([rec("a", "b", 1.0, p50="12")])), "p50 is not a number"),
    "bad-better": (json.dumps(doc([rec("a", "b", 1.0, better="faster")])), "better must be"),
    "duplicate": (json.dumps(doc([rec("a", "b", 1.0), rec("a", "b", 2.0)])), "repeats bench a"),
    "record-not-object": (json.dumps(doc([42])), "is not an object"),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_input_refused_by_every_command(tmp_path, write, kind):
    content, message = BAD[kind]
    bad = _text(tmp_path, f"{kind}.json", content)
    good = write("good.json", [rec("pingpong", "futex", 100.0)])
    for args in (["compare", good, bad], ["plot", bad, "-o", tmp_path / "out"],
                 ["html", bad, "-o", tmp_path / "r.html"]):
        p = run_cli(*args)
        assert p.returncode == 2, (args, p.stderr)
        assert "Traceback" not in p.stderr
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1, p.stderr
        assert lines[0].startswith("xcall-report: error: ")
        assert message in lines[0]
        assert f"{kind}.json" in lines[0]
    assert not (tmp_path / "r.html").exists()


def test_missing_file_exits_2(tmp_path):
    p = run_cli("plot", tmp_path / "nope.json", "-o", tmp_path)
    assert p.returncode == 2 and "cannot read" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("args", [[], ["frobnicate"], ["compare"], ["plot", "x.json"],
                                  ["compare", "a.json", "--format", "xml"]])
def test_usage_errors_exit_2(args):
    p = run_cli(*args)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_compare_needs_two_files(write):
    p = run_cli("compare", write("a.json", [rec("a", "b", 1.0)]))
    assert p.returncode == 2 and "at least two files" in p.stderr


def test_null_statistic_warns_on_the_command_line(write, tmp_path):
    bad = rec("ipi", "dry-run/delivery", 1.0)
    bad["mean"] = None
    p = run_cli("plot", write("a.json", [bad, rec("ipi", "self/total", 20.0)]), "-o", tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stderr.startswith("xcall-report: warning: a.json: results[0]")
    assert "record skipped" in p.stderr and "Traceback" not in p.stderr
