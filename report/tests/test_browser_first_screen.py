"""The page-level rules of issue 38 in headless Chromium, on a quiet, a disturbed and a
1-CPU run, at 1400 and 390 pixels:

- (b) the smallest text of every chart, scaled by the width it is shown at over its own
  (the SVG's viewBox), is at least 9 CSS pixels at 390 (read from each chart's SVG);
- a chart box wider than the screen shows its scroll cue;
- skipped cases are labelled: as many "skipped: ..." texts in a chart as the family has
  skipped cases, "not measured: ..." in the tables' skipped rows, a sentence and no chart
  for a family with nothing measured;
- the first screen (1400x900, 390x844) holds the lead, which says what was measured and
  the main result; at 1400 also the summary's five figures.

One Chromium run per page and width (--dump-dom); a script in a copy of the page writes
what it finds into the frame's DOM. Skipped where no Chromium is installed.
"""
import html
import json
import re

import pytest

import samples
from test_browser import BROWSER, FRAME, MAX_HEIGHT, _chromium
from xcall_report import plots

pytestmark = pytest.mark.skipif(BROWSER is None, reason="no headless Chromium "
                                "(chromium, chromium-browser or google-chrome) on PATH; "
                                "`make deps` installs Debian's chromium")

MIN_PX = 9.0
FIRST = {1400: 900, 390: 844}           # the first screen: a desktop's, a phone's

PROBE = """<script>
addEventListener("load", () => {
  for (const d of document.querySelectorAll("details")) d.open = true;
  const box = el => { const r = el.getBoundingClientRect();
    return {x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height}; };
  const shown = el => el && getComputedStyle(el).display !== "none" &&
    el.getBoundingClientRect().width > 0 && el.getBoundingClientRect().height > 0;
  const charts = [];
  for (const f of document.querySelectorAll("figure.chart")) {
    const img = f.querySelector("img"), cb = f.querySelector(".chart-box");
    const svg = new DOMParser().parseFromString(atob(img.src.split(",")[1]), "image/svg+xml");
    const vb = svg.documentElement.getAttribute("viewBox").split(/\\s+/).map(Number);
    let min = 1e9, skipped = 0;
    for (const t of svg.querySelectorAll("text")) {
      const m = /font-size:\\s*([\\d.]+)px/.exec(t.getAttribute("style") || "");
      if (m && t.textContent.trim()) min = Math.min(min, Number(m[1]));
      if (t.textContent.startsWith("skipped: ")) skipped++;
    }
    const cue = f.querySelector(".scroll-cue");
    charts.push({name: f.dataset.name, bench: f.dataset.bench,
                 skipped: Number(f.dataset.skipped), svgSkipped: skipped,
                 minFontPx: min * img.getBoundingClientRect().width / vb[2],
                 overflows: cb.scrollWidth > cb.clientWidth + 1,
                 cue: shown(cue) ? box(cue) : null});
  }
  const rows = [...document.querySelectorAll("#tables tr.skipped")].map(r => r.textContent);
  const lead = document.getElementById("lead");
  parent.postMessage(JSON.stringify({
    viewport: innerWidth, width: document.documentElement.scrollWidth, charts, rows,
    unmeasured: [...document.querySelectorAll("p.unmeasured")].map(p => p.dataset.bench),
    lead: lead ? Object.assign(box(lead), {text: lead.textContent}) : null,
    values: [...document.querySelectorAll(".figure-card .value")].map(v => Object.assign(
      box(v), {name: v.closest("[data-figure]").dataset.figure}))}), "*");
});
</script>"""


def probe(tmp_path, page, width, tag):
    inner = tmp_path / f"fs-{tag}-{width}.html"
    inner.write_text(page.replace("</body>", PROBE + "</body>"))
    outer = tmp_path / f"fs-frame-{tag}-{width}.html"
    outer.write_text(FRAME.format(src=inner.name, width=width, height=MAX_HEIGHT))
    dom = _chromium(tmp_path, outer.as_uri(), width, 900, "--dump-dom")
    m = re.search(r'<pre id="probe">(.+?)</pre>', dom, re.S)
    assert m, "the probe script did not run"
    out = json.loads(html.unescape(m.group(1)))
    assert out["viewport"] == width
    return out


RUNS = {"quiet": samples.quiet_run, "disturbed": samples.disturbed_run,
        "one-cpu": samples.one_cpu_run}


@pytest.fixture(scope="module", params=list(RUNS))
def run(request, whole_runs):
    res, _, page = whole_runs[request.param]
    return request.param, res, page


@pytest.mark.parametrize("width", [1400, 390])
def test_page_rules(run, width, tmp_path):
    name, res, page = run
    got = probe(tmp_path, page, width, name)
    where = f"{name} at {width} px"
    assert got["width"] <= width, f"{where}: the page scrolls sideways"
    # (b) readable chart text where a phone shows it
    for c in got["charts"]:
        if width == 390:
            assert c["minFontPx"] >= MIN_PX, \
                f"{where}: {c['name']}'s smallest text is {c['minFontPx']:.1f} px"
        if c["overflows"]:
            assert c["cue"] is not None, f"{where}: {c['name']} is cut off with no scroll cue"
            assert c["cue"]["x"] + c["cue"]["w"] <= width + 1
    if width == 390:
        assert any(c["overflows"] for c in got["charts"])       # so the cue was looked at
    # skipped cases labelled, empty families said
    for c in got["charts"]:
        if c["bench"] != "wake" and not c["name"].endswith("-distribution"):
            assert c["svgSkipped"] == c["skipped"], \
                f"{where}: {c['name']} labels {c['svgSkipped']} of {c['skipped']} skipped cases"
    assert all("not measured: " in r for r in got["rows"]), got["rows"]
    skipped = sum(1 for b in res.benches() for c in res.cases(b)
                  if res.runs(b, c)[0].skipped is not None)
    assert len(got["rows"]) == skipped
    assert sorted(got["unmeasured"]) == sorted(plots.unmeasured(res))
    assert not {c["bench"] for c in got["charts"]} & set(plots.unmeasured(res))
    # the first screen says what was measured and the main result
    lead = got["lead"]
    assert lead and lead["y"] + lead["h"] <= FIRST[width], f"{where}: the lead is below the fold"
    assert lead["text"].startswith("Measured: ") and "Main result: " in lead["text"]
    if width == 1400:
        for v in got["values"]:
            assert v["y"] + v["h"] <= FIRST[width], f"{where}: the {v['name']} figure is low"
