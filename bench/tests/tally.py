# SPDX-License-Identifier: MIT
"""tally.py - the check scripts' result lines ("ok", "FAIL", "skip") and their
count, one copy for bench/tests/check_*.py. Python 3 standard library only."""

counts = {"passed": 0, "failed": 0, "skipped": 0}


def ok(name):
    counts["passed"] += 1
    print(f"ok    {name}")


def fail(name, why):
    counts["failed"] += 1
    print(f"FAIL  {name}: {why}")


def skip(name, why):
    counts["skipped"] += 1
    print(f"skip  {name}: {why}")


def check(name, cond, why=""):
    """ok when cond holds, else FAIL with why; returns cond."""
    if cond:
        ok(name)
    else:
        fail(name, why)
    return cond


def summary():
    """'N passed, M failed' and ', K skipped' where any were."""
    c = counts
    return f"{c['passed']} passed, {c['failed']} failed" + (f", {c['skipped']} skipped" if c["skipped"] else "")


def exit_code(need_one_pass=True):
    """1 on a failure, or (need_one_pass) when nothing passed at all; else 0."""
    return 1 if counts["failed"] or (need_one_pass and not counts["passed"]) else 0
