"""The page in a real browser: headless Chromium renders it, and the summary and every figure
are there, with more than background in each figure's box.

A copy of the page gets a script (the page itself has none) that opens every <details> and
sends the boxes of the summary, its cards and every chart to the frame around it, which writes
them into its DOM; one Chromium run dumps that DOM, a second takes a screenshot of the whole
page at the same width, and each box is cut out of it and looked at. Skipped where no
Chromium is installed (`make deps` installs it).
"""
import html
import json
import os
import re
import shutil
import subprocess

import pytest

import samples
from conftest import run_cli

PIL = pytest.importorskip("PIL.Image", reason="Pillow (a matplotlib dependency) is missing")
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
BROWSER = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no headless Chromium "
                                "(chromium, chromium-browser or google-chrome) on PATH; "
                                "`make deps` installs Debian's chromium")

PROBE = """<script>
addEventListener("load", () => {
  for (const d of document.querySelectorAll("details")) d.open = true;
  const boxes = [];
  const add = (kind, name, el, clip) => {
    const r = el.getBoundingClientRect();
    if (clip) {              // the part of a chart its scrolling box shows
      const c = clip.getBoundingClientRect();
      const left = Math.max(r.left, c.left), top = Math.max(r.top, c.top);
      r.width = Math.min(r.right, c.right) - left; r.height = Math.min(r.bottom, c.bottom) - top;
      r.x = left; r.y = top;
    }
    boxes.push({kind, name, x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height,
                loaded: el.tagName !== "IMG" || (el.complete && el.naturalWidth > 0)});
  };
  add("summary", "summary", document.getElementById("summary"));
  for (const c of document.querySelectorAll("[data-figure]")) {
    add("card", c.dataset.figure, c);
    const v = c.querySelector(".value");
    if (v) add("value", c.dataset.figure, v);
  }
  for (const i of document.querySelectorAll("figure.chart img"))
    add("chart", i.closest("figure").dataset.name, i, i.parentElement);
  parent.postMessage(JSON.stringify({
    viewport: innerWidth, width: document.documentElement.scrollWidth,
    height: Math.ceil(document.body.getBoundingClientRect().bottom) + 20, boxes}), "*");
});
</script>"""
# The page is shown in a frame of the width asked: Chromium's headless window is at least
# 500 pixels wide, a phone's screen is not.
FRAME = """<!DOCTYPE html><html><body style="margin:0">
<iframe src="{src}" style="border:0;display:block;width:{width}px;height:{height}px"></iframe>
<pre id="probe"></pre>
<script>addEventListener("message", e => {{
  document.getElementById("probe").textContent = e.data; }});</script></body></html>"""
MIN_WINDOW = 500
MAX_HEIGHT = 16000          # Chromium's screenshots stop near 16384 pixels


def _chromium(tmp_path, url, width, height, *args):
    cmd = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", "--mute-audio", f"--user-data-dir={tmp_path / 'profile'}",
           f"--window-size={max(width, MIN_WINDOW)},{height}", "--virtual-time-budget=20000",
           *args, url]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=180,
                       env=dict(os.environ, HOME=str(tmp_path)))
    assert p.returncode == 0, f"{BROWSER} failed: {p.stderr[-2000:]}"
    return p.stdout


def render(tmp_path, page, width):
    """(layout, screenshot Image) of an HTML page in a frame width pixels wide: the layout
    is measured in a frame taller than the page (no scroll bar), then the page is shot whole."""
    inner = tmp_path / f"page-{width}.html"
    inner.write_text(page.replace("</body>", PROBE + "</body>"))
    outer = tmp_path / f"frame-{width}.html"
    outer.write_text(FRAME.format(src=inner.name, width=width, height=MAX_HEIGHT))
    dom = _chromium(tmp_path, outer.as_uri(), width, 900, "--dump-dom")
    m = re.search(r'<pre id="probe">(.+?)</pre>', dom, re.S)
    assert m, "the probe script did not run"
    layout = json.loads(html.unescape(m.group(1)))
    assert layout["viewport"] == width
    height = min(int(layout["height"]), MAX_HEIGHT)
    outer.write_text(FRAME.format(src=inner.name, width=width, height=height))
    shot = tmp_path / f"shot-{width}.png"
    _chromium(tmp_path, outer.as_uri(), width, height, f"--screenshot={shot}")
    return layout, PIL.open(shot).convert("RGB")


def ink(image, box):
    """The share of a box's pixels that differ clearly from its most common colour."""
    x, y = max(int(box["x"]), 0), max(int(box["y"]), 0)
    crop = image.crop((x, y, min(x + int(box["w"]), image.width),
                       min(y + int(box["h"]), image.height)))
    pixels = list(crop.get_flattened_data() if hasattr(crop, "get_flattened_data")
                  else crop.getdata())
    if not pixels:
        return 0.0
    counts = {}
    for p in pixels:
        counts[p] = counts.get(p, 0) + 1
    bg = max(counts, key=counts.get)
    return sum(n for p, n in counts.items()
               if max(abs(a - b) for a, b in zip(p, bg)) > 40) / len(pixels)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The report of every bench (wake too), a disturbed host, a capped and a disturbed case."""
    d = samples.all_benches()
    d["results"] += samples.wake()["results"]
    d["host"]["disturbed"] = "other tasks took 48% of CPUs 0-1"
    for r in d["results"]:
        if r["bench"] == "pingpong" and r["case"] in ("futex", "pipe"):
            r.setdefault("params", {})["capped" if r["case"] == "futex" else "disturbed"] = \
                True if r["case"] == "futex" else d["host"]["disturbed"]
    tmp = tmp_path_factory.mktemp("browser")
    src, out = tmp / "run.json", tmp / "report.html"
    src.write_text(json.dumps(d))
    p = run_cli("html", src, "-o", out)
    assert p.returncode == 0, p.stderr
    return out.read_text()


def _names(layout, kind):
    return [b["name"] for b in layout["boxes"] if b["kind"] == kind]


def test_desktop_summary_first_and_every_figure_drawn(page, tmp_path):
    layout, image = render(tmp_path, page, 1400)
    assert _names(layout, "card") == ["machine", "limit", "call", "kernel", "wake", "seeds"]
    charts = _names(layout, "chart")
    assert charts[:10] == ["pingpong", "matrix", "bringup", "storm", "heatmap", "kernel", "ipi",
                           "idle", "mystery", "wake"]
    assert len(charts) == 15 and all(n.endswith("-distribution") for n in charts[10:])
    assert layout["height"] < MAX_HEIGHT
    for b in layout["boxes"]:
        assert b["w"] > 20 and b["h"] > 10, f"{b['kind']} {b['name']} has no size"
        assert b["loaded"], f"chart {b['name']} did not load"
        assert ink(image, b) > 0.005, f"{b['kind']} {b['name']} is blank"
    # the first screen (1400x900) shows the summary's five figures
    for b in layout["boxes"]:
        if b["kind"] == "value":
            assert b["y"] + b["h"] <= 900, f"the {b['name']} figure is below the first screen"
    assert layout["width"] <= 1400                             # nothing sticks out sideways


def test_phone_width(page, tmp_path):
    layout, image = render(tmp_path, page, 390)
    assert layout["width"] <= 390, "the page scrolls sideways on a phone"
    cards = [b for b in layout["boxes"] if b["kind"] == "card"]
    assert len(cards) == 6 and len({round(b["x"]) for b in cards}) == 1    # one column
    for b in layout["boxes"]:
        assert b["x"] + b["w"] <= 391, f"{b['kind']} {b['name']} is wider than the screen"
        if b["y"] + b["h"] > image.height:
            continue                # charts keep their size on a phone: past the shot's end
        assert ink(image, b) > 0.005, f"{b['kind']} {b['name']} is blank at phone width"
