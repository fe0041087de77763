"""Builders of small results files for the tests."""
import copy
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

HOST = {"hostname": "vm", "cpu_model": "Test CPU", "cpus_online": 4, "kernel": "6.1.0",
        "virtualised": True, "hypervisor": "KVM", "idle_driver": "haltpoll",
        "tsc_invariant": True}


def rec(bench, case, mean, repeat=0, unit="ns", better="lower", n=1000, stddev=None, **kw):
    """A record whose percentiles follow from its mean unless given."""
    r = {"bench": bench, "case": case, "unit": unit, "n": n, "mean": mean,
         "p50": kw.pop("p50", mean * 0.9), "p90": kw.pop("p90", mean * 1.2),
         "p99": kw.pop("p99", mean * 2.0), "max": kw.pop("max", mean * 10.0),
         "min": kw.pop("min", mean * 0.5), "repeat": repeat, "better": better}
    if stddev is not None:
        r["stddev"] = stddev
    r.update(kw)
    return r


def doc(records, host=None):
    return {"schema_version": 1, "tool": "xcall-bench", "tool_version": "0.1",
            "created": "2026-11-22T01:30:00Z", "command": ["xcall-bench", "test"],
            "host": copy.deepcopy(host or HOST), "results": records}


@pytest.fixture
def write(tmp_path):
    """write(name, records_or_doc) -> path of a results file in tmp_path."""
    def _write(name, content):
        d = content if isinstance(content, dict) else doc(content)
        p = tmp_path / name
        p.write_text(json.dumps(d, indent=1))
        return str(p)
    return _write


def load_doc(tmp_path_factory, name, d):
    """A results document written under a fresh directory and loaded: for module fixtures."""
    from xcall_report import load
    p = tmp_path_factory.mktemp(name) / f"{name}.json"
    p.write_text(json.dumps(d))
    return load.load(str(p))


def run_cli(*args):
    """Run xcall-report as a separate process, as a user would."""
    import subprocess
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-m", "xcall_report", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture(scope="session")
def whole_runs(tmp_path_factory):
    """{name: (Results, [(chart, Figure)], page)} of the quiet, disturbed and 1-CPU runs,
    drawn once for every test that looks at them, with every warning an error (none may
    reach the user)."""
    import warnings
    from unittest import mock
    import samples
    from xcall_report import html, plots
    out = {}
    for name, fn in (("quiet", samples.quiet_run), ("disturbed", samples.disturbed_run),
                     ("one-cpu", samples.one_cpu_run)):
        res = load_doc(tmp_path_factory, name, fn())
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            figs = plots.figures(res)
            with mock.patch.object(html.plots, "figures", lambda r, _f=figs: _f):
                page = html.page([res])
        out[name] = (res, figs, page)
    return out


# --- progress: a test still running says so, so that no 20 s pass without a line (make check
# prints progress at least every 20 s; one Chromium render took 35 s on a loaded machine). A
# look every 5 s, a line once 14 s passed since the last one (the test's own line, at its start
# and end, or this one's): at most 19 s apart. The line goes out with the capture suspended, as
# pytest's own report lines do.
_running = {"nodeid": None, "since": 0.0, "said": 0.0}
TICK_S, QUIET_S = 5, 14


def pytest_runtest_logstart(nodeid, location):
    import time
    now = time.monotonic()
    _running["nodeid"], _running["since"], _running["said"] = nodeid, now, now


def pytest_runtest_logfinish(nodeid, location):
    import time
    _running["nodeid"], _running["said"] = None, time.monotonic()


def pytest_configure(config):
    import threading
    import time

    def tick():
        while True:
            time.sleep(TICK_S)
            nodeid = _running["nodeid"]
            # looked up here: the terminal reporter registers after the conftests' configure
            reporter = config.pluginmanager.get_plugin("terminalreporter")
            capture = config.pluginmanager.get_plugin("capturemanager")
            now = time.monotonic()
            if nodeid and reporter and capture and now - _running["said"] >= QUIET_S:
                with capture.global_and_fixture_disabled():
                    reporter.write_line(f"  ... {nodeid} still running, "
                                        f"{now - _running['since']:.0f} s")
                _running["said"] = now

    threading.Thread(target=tick, daemon=True, name="progress").start()
