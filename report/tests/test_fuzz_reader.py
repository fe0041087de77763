"""Fuzzing the results-file reader with hypothesis (docs/fuzz.md).

Whatever bytes or JSON document a results file holds, xcall-report either loads it or
refuses it with its one clean error: load.load() raises InputError, never anything else, and
the command line exits 2 (or 0 when it loaded), never with a traceback. A document that
loads also goes through `xcall-report compare` into a file.

Inputs that broke this once are kept in fuzz/regressions/reader/ and replayed here. While a
bug is not fixed yet its input is listed in fuzz/regressions/KNOWN: its replay is skipped
with the reason, and the strategies below leave out the class of input that triggers it
(see KNOWN_CLASSES); removing the line from KNOWN brings both back.

XCALL_FUZZ_EXAMPLES sets the examples per property (default 100, derandomized so that
`make check` is repeatable); `make fuzz` runs them with many more and random seeds.
"""
import json
import os
import string

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from conftest import HOST, doc, rec  # noqa: E402
from xcall_report import cli, load  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
REGRESSIONS = os.path.join(ROOT, "fuzz", "regressions")


def _known():
    """{"reader/FILE": reason} from fuzz/regressions/KNOWN."""
    out = {}
    try:
        with open(os.path.join(REGRESSIONS, "KNOWN"), encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    name, _, reason = line.partition(" ")
                    out[name] = reason.strip()
    except FileNotFoundError:
        pass
    return out


KNOWN = _known()

# The class of input behind each known bug: generated only once its regression is fixed.
KNOWN_CLASSES = {
    "huge_ints": "reader/huge-int-statistic.json",        # int beyond float range
    "long_ints": "reader/int-of-5000-digits.json",        # int literal over 4300 digits
    "deep": "reader/nested-20000-deep.json",             # arrays nested past the recursion limit
    "surrogates": "reader/lone-surrogate-in-case.json",   # "\ud800" in a string, then written
    "tiny": "reader/welch-float-underflow.json",          # statistics near 1e-148: squares underflow
}


def enabled(cls):
    return KNOWN_CLASSES[cls] not in KNOWN


EXAMPLES = int(os.environ.get("XCALL_FUZZ_EXAMPLES", "100"))
RANDOM = os.environ.get("XCALL_FUZZ_RANDOM", "0") not in ("", "0")
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not RANDOM,
                suppress_health_check=list(HealthCheck), print_blob=True)


# ---- what must hold ----

def check_loads_or_refuses(tmp_path, data, name="fuzz.json"):
    """load() gives Results or InputError; the CLI exits 0 or 2 without a traceback."""
    p = tmp_path / name
    p.write_bytes(data)
    try:
        results = load.load(str(p))
    except load.InputError as e:
        msg = str(e)
        assert msg and "\n" not in msg, repr(msg)       # one line
        results = None
    else:
        assert isinstance(results, load.Results) and results.records
        for r in results.records:
            assert set(load.STATS) <= set(r.stats)
    out = tmp_path / "compare.txt"
    # main() turns InputError into 2 and a write failure into 1; anything else propagates
    rc = cli.main(["compare", str(p), str(p), "-o", str(out)])
    assert rc == (0 if results is not None else 2), rc
    return results


# ---- strategies ----

def _floats(**kw):
    f = st.floats(**kw)
    return f if enabled("tiny") else f.filter(lambda x: not 0 < abs(x) < 1e-100)


def _numbers():
    parts = [st.integers(-2**63, 2**63), _floats(allow_nan=True, allow_infinity=True)]
    if enabled("huge_ints"):
        parts.append(st.integers(min_value=2**1023).map(lambda v: v * 2**10))
    return st.one_of(*parts)


def _text():
    if enabled("surrogates"):
        alphabet = st.one_of(st.characters(exclude_categories=()), st.sampled_from("\ud800\udfff"))
    else:
        alphabet = st.characters(exclude_categories=("Cs",))
    return st.text(alphabet, max_size=12)


SCALARS = st.one_of(st.none(), st.booleans(), _numbers(), _text(),
                    st.sampled_from(["lower", "higher", "ns", "s", "pingpong", "", "1"]))
JSONISH = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(_text(), inner, max_size=4)), max_leaves=12)


@st.composite
def records(draw):
    """A plausible record with some fields replaced, removed or added."""
    r = rec(draw(st.sampled_from(["pingpong", "storm", "ipi"])),
            draw(st.sampled_from(["futex", "case/a", "x"])),
            draw(_floats(min_value=0, max_value=1e12)), repeat=draw(st.integers(0, 3)))
    for key in draw(st.lists(st.sampled_from(sorted(r) + ["cpus", "params", "counters",
                                                          "stddev"]), max_size=3)):
        action = draw(st.sampled_from(["replace", "delete", "null"]))
        if action == "delete":
            r.pop(key, None)
        elif action == "null":
            r[key] = None
        else:
            r[key] = draw(JSONISH)
    return r


@st.composite
def documents(draw):
    d = doc(draw(st.lists(st.one_of(records(), JSONISH), max_size=4)))
    for key in draw(st.lists(st.sampled_from(sorted(d)), max_size=2)):
        if draw(st.booleans()):
            d.pop(key, None)
        else:
            d[key] = draw(JSONISH)
    if draw(st.booleans()):
        d["host"] = dict(HOST, **draw(st.dictionaries(_text(), JSONISH, max_size=2)))
    return d


def _nested(depth):
    return "[" * depth + "1" + "]" * depth


@st.composite
def texts(draw):
    """The text of a valid file, cut, spliced or with a value swapped for an odd literal."""
    t = json.dumps(doc([rec("pingpong", "futex", 100.0), rec("storm", "baseline", 2.0)]),
                   indent=draw(st.sampled_from([None, 1])))
    literals = ["NaN", "-Infinity", "1e999", "-0", "1E-400", "true", "\"\\u0000\"", "{}", "[]",
                "12345678901234567890"]
    if enabled("huge_ints"):
        literals.append("1" + "0" * 400)
    if enabled("long_ints"):
        literals.append("9" * draw(st.integers(4290, 4400)))
    if enabled("deep"):
        literals.append(_nested(draw(st.sampled_from([900, 1000, 5000, 100000]))))
    if enabled("surrogates"):
        literals.append("\"\\ud800\"")
    op = draw(st.sampled_from(["cut", "splice", "literal"]))
    if op == "cut":
        return t[:draw(st.integers(0, len(t)))]
    if op == "splice":
        i = draw(st.integers(0, len(t)))
        j = draw(st.integers(i, min(len(t), i + 8)))
        return t[:i] + draw(st.text(string.printable, max_size=6)) + t[j:]
    i = draw(st.sampled_from([m for m in range(len(t)) if t[m] in ":[,"]))
    end = i + 1
    while end < len(t) and t[end] not in ",}]\n":
        end += 1
    return t[:i + 1] + draw(st.sampled_from(literals)) + t[end:]


# ---- the properties ----

@FUZZ
@given(data=st.binary(max_size=300))
def test_any_bytes(tmp_path_factory, data):
    check_loads_or_refuses(tmp_path_factory.mktemp("b"), data)


@FUZZ
@given(value=JSONISH)
def test_any_json_value(tmp_path_factory, value):
    check_loads_or_refuses(tmp_path_factory.mktemp("j"), json.dumps(value).encode())


@FUZZ
@given(d=documents())
def test_mutated_documents(tmp_path_factory, d):
    check_loads_or_refuses(tmp_path_factory.mktemp("d"), json.dumps(d).encode())


@FUZZ
@given(t=texts(), encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "latin-1"]))
def test_mutated_text(tmp_path_factory, t, encoding):
    data = t.encode(encoding, errors="surrogatepass" if encoding.startswith("utf") else "replace")
    check_loads_or_refuses(tmp_path_factory.mktemp("t"), data)


def test_valid_documents_load(tmp_path):
    """The properties are not vacuous: the generators' starting point loads."""
    d = doc([rec("pingpong", "futex", 100.0)])
    assert check_loads_or_refuses(tmp_path, json.dumps(d).encode()) is not None


# ---- regressions found by fuzzing ----

def _regressions():
    d = os.path.join(REGRESSIONS, "reader")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


@pytest.mark.parametrize("name", _regressions())
def test_regression(tmp_path, name):
    key = f"reader/{name}"
    if key in KNOWN:
        pytest.skip(f"{key}: known, not fixed yet: {KNOWN[key]}")
    with open(os.path.join(REGRESSIONS, "reader", name), "rb") as f:
        check_loads_or_refuses(tmp_path, f.read(), name)


def test_known_classes_name_real_files():
    for path in KNOWN_CLASSES.values():
        assert os.path.exists(os.path.join(REGRESSIONS, path)), path
