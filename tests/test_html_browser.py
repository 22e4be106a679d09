"""Every command's HTML page opened in a real browser: headless Chromium (Debian's ``chromium``)
driven through its ``chromedriver`` (Debian's ``chromium-driver``, built from the same source, so
the two always match) by selenium. Nothing is downloaded at run time: selenium is given both
paths and never looks for a driver of its own.

Each page loads with no console error and no network request but its own file, its charts drew
(SVG with a size and bars with a width), it is screenshotted, and the breakdown page also sorts
a table on a click, shows a tooltip on a bar, turns dark with the system, and reads the same
with JavaScript off. Skipped, with the reason, where selenium, Chromium or chromedriver is absent
(``.ci/run`` installs them).

``Browser`` is also what ``scripts/html_screenshot.py`` and ``scripts/html_bench.py`` use.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .test_html import CASES, write_pages

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = (
    "--headless=new",
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
    "--no-first-run",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--mute-audio",
)

CHARTS_JS = """
return Array.from(document.querySelectorAll('svg.chart')).map(function (s) {
  var r = s.getBoundingClientRect();
  var bars = Array.from(s.querySelectorAll('rect.b')).filter(function (b) {
    var q = b.getBoundingClientRect(); return q.width > 0 && q.height > 0; });
  return {width: r.width, height: r.height, bars: bars.length};
});
"""


def find_browser() -> tuple[str, str] | str:
    """(Chromium, chromedriver), or why there is none."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    browser = next((p for p in map(shutil.which, BROWSERS) if p), None)
    if browser is None:
        return "no Chromium on PATH (apt-get install chromium chromium-driver)"
    driver = shutil.which("chromedriver")
    if driver is None:
        return "no chromedriver on PATH (apt-get install chromium-driver)"
    return browser, driver


@dataclass
class Load:
    url: str
    seconds: float  # driver.get, to the load event
    load_ms: float  # the page's own navigation timing: start to the end of the load event
    console: list[dict] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # every URL the page asked for

    @property
    def errors(self) -> list[str]:
        return [e["message"] for e in self.console if e["level"] == "SEVERE"]


class Browser:
    """One headless Chromium, driven by selenium through the system chromedriver."""

    def __init__(
        self, browser: str, driver: str, *, width: int = 1100, height: int = 900, javascript: bool = True
    ) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        # Its profile, crash reports and caches in a directory of its own, removed on quit: a
        # test run leaves nothing under the user's home.
        self.home = tempfile.mkdtemp(prefix="inductor-bench-chromium-")
        opts = webdriver.ChromeOptions()
        opts.binary_location = browser
        for flag in (*FLAGS, f"--window-size={width},{height}", f"--user-data-dir={self.home}/profile"):
            opts.add_argument(flag)
        if not javascript:
            opts.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        env = {**os.environ, "HOME": self.home, "XDG_CONFIG_HOME": self.home, "XDG_CACHE_HOME": self.home}
        self.driver = webdriver.Chrome(service=Service(driver, env=env), options=opts)

    def open(self, path: Path) -> Load:
        d = self.driver
        d.get("about:blank")
        d.get_log("browser"), d.get_log("performance")  # drop what came before
        url = path.resolve().as_uri()
        t = time.perf_counter()
        d.get(url)
        seconds = time.perf_counter() - t
        timing = d.execute_script(
            "var n = performance.getEntriesByType('navigation')[0]; return n ? n.loadEventEnd : -1;"
        )
        requests = []
        for entry in d.get_log("performance"):
            msg = json.loads(entry["message"])["message"]
            if msg["method"] == "Network.requestWillBeSent":
                requests.append(msg["params"]["request"]["url"])
        return Load(url, seconds, float(timing), d.get_log("browser"), requests)

    def charts(self) -> list[dict]:
        return self.driver.execute_script(CHARTS_JS)

    def screenshot(self, path: Path, clip: tuple[int, int, int, int] | None = None) -> None:
        """The viewport, or ``clip`` = (x, y, width, height) of the whole page, as PNG."""
        import base64

        if clip is None:
            self.driver.save_screenshot(str(path))
            return
        x, y, w, h = clip
        shot = self.driver.execute_cdp_cmd(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "clip": {"x": x, "y": y, "width": w, "height": h, "scale": 1},
            },
        )
        path.write_bytes(base64.b64decode(shot["data"]))

    def dark(self, on: bool = True) -> None:
        self.driver.execute_cdp_cmd(
            "Emulation.setEmulatedMedia",
            {"features": [{"name": "prefers-color-scheme", "value": "dark" if on else "light"}]},
        )

    def quit(self) -> None:
        self.driver.quit()
        shutil.rmtree(self.home, ignore_errors=True)


FOUND = find_browser()
needs_browser = pytest.mark.skipif(isinstance(FOUND, str), reason=f"no browser: {FOUND}")


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    return write_pages(tmp_path_factory.mktemp("pages"))


@pytest.fixture(scope="module")
def browser():
    assert not isinstance(FOUND, str)
    b = Browser(*FOUND)
    yield b
    b.quit()


@needs_browser
@pytest.mark.parametrize("name", [*CASES, "index"])
def test_page_opens_clean_and_draws(browser, pages, name, tmp_path):
    load = browser.open(pages[name])
    assert load.errors == []
    assert load.requests == [load.url]  # the page itself, nothing else
    assert browser.driver.execute_script("return performance.getEntriesByType('resource').length") == 0
    charts = browser.charts()
    assert len(charts) == CASES.get(name, CASES["breakdown-cpu"])[2]
    for c in charts:
        assert c["width"] > 100 and c["height"] > 20 and c["bars"] >= 1, c
    shot = tmp_path / f"{name}.png"
    browser.screenshot(shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


@needs_browser
def test_breakdown_page_sorts_shows_tips_and_goes_dark(browser, pages):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    browser.open(pages["breakdown-cpu"])
    d = browser.driver
    # sort the whole-step category table by its "ms" column, ascending after descending
    table = d.find_elements(By.CSS_SELECTOR, "table")[1]
    header = table.find_elements(By.CSS_SELECTOR, "thead th")[2]

    def column() -> list[float]:
        return [float(td.text) for td in table.find_elements(By.CSS_SELECTOR, "tbody td:nth-child(3)")]

    header.click()
    assert header.get_attribute("aria-sort") == "descending" and column() == sorted(column(), reverse=True)
    header.click()
    assert column() == sorted(column())
    assert table.find_element(By.CSS_SELECTOR, "tfoot td").text == "total"  # the sum stays last
    # a bar's tooltip shows at once, naming the kernel and its time
    bar = d.find_elements(By.CSS_SELECTOR, "svg.chart rect.b")[-1]
    ActionChains(d).move_to_element(bar).perform()
    tip = d.find_element(By.ID, "tip")
    assert tip.is_displayed() and " ms per step" in tip.text
    # the system's dark mode turns the page dark
    background = "return getComputedStyle(document.body).backgroundColor"
    assert d.execute_script(background) == "rgb(255, 255, 255)"
    browser.dark()
    try:
        assert d.execute_script(background) == "rgb(13, 17, 23)"
    finally:
        browser.dark(False)
    assert browser.charts()[0]["bars"] >= 1


@needs_browser
def test_breakdown_page_reads_without_javascript(pages):
    b = Browser(*FOUND, javascript=False)
    try:
        load = b.open(pages["breakdown-cpu"])
        assert load.errors == []
        assert not b.driver.execute_script("return document.documentElement.classList.contains('js')")
        rows = b.driver.find_elements("css selector", "tbody tr")
        assert len(rows) > 20 and all(r.is_displayed() for r in rows[:5])
        assert [c["bars"] >= 1 for c in b.charts()] == [True] * 3  # the SVG needs no script
    finally:
        b.quit()


@needs_browser
@pytest.mark.parametrize("name", ["breakdown-cpu", "breakdown-cuda", "diff"])
def test_a_page_prints_whole_and_dark_on_light(pages, name):
    """Printed on A4 (its 718 px between margins) from a system in dark mode: the text is the
    light theme's, dark on the white paper (a printer leaves the dark background out), no table
    is cut at the page's edge (on screen a wide table scrolls; on paper it cannot), and a table
    folded under its chart is printed."""
    b = Browser(*FOUND, width=718)
    try:
        b.open(pages[name])
        b.driver.execute_cdp_cmd(
            "Emulation.setEmulatedMedia",
            {"media": "print", "features": [{"name": "prefers-color-scheme", "value": "dark"}]},
        )
        assert b.driver.execute_script("return getComputedStyle(document.body).color") == "rgb(31, 35, 40)"
        cut = b.driver.execute_script(
            "return Array.from(document.querySelectorAll('.scroll')).filter(function (e) {"
            " return e.scrollWidth > e.clientWidth + 1; }).length"
        )
        assert cut == 0
        assert b.driver.execute_script("return document.documentElement.scrollWidth") <= 718
        # a folded table (a diff's per category, under its chart) is printed unfolded
        folded = "return Array.from(document.querySelectorAll('details table')).map(function (t) {"
        assert all(b.driver.execute_script(folded + " return t.checkVisibility(); })"))
    finally:
        b.quit()



@needs_browser
@pytest.mark.parametrize("media", ["print", "screen"])
def test_a_long_run_path_wraps_in_the_heading(tmp_path, media):
    """The runs' paths head a diff page; from a deep checkout or runs directory they are longer
    than the page is wide (A4's 718 px between margins, or a narrow window) and, having no
    space or hyphen to break at, wrap inside the line rather than widen the page past its edge."""
    from .test_html import BREAKDOWN, RESULTS, run

    deep = tmp_path / ("a_deep_directory_of_runs_" * 3) / ("and_one_more_level_" * 3)
    base, head = deep / "base", deep / "head"
    shutil.copytree(BREAKDOWN, base)
    shutil.copytree(RESULTS / "cpu_mlp_slow_train", head)
    page = tmp_path / "diff.html"
    run(["diff", str(base), str(head), "--html", str(page)])
    b = Browser(*FOUND, width=718)
    try:
        b.open(page)
        b.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": media})
        assert str(deep) in b.driver.find_element("css selector", "h1").text.replace("\n", "")
        assert b.driver.execute_script("return document.documentElement.scrollWidth") <= 718
    finally:
        b.quit()

ROOFLINE = Path(__file__).resolve().parent / "fixtures" / "results" / "cpu_mlp_train_roofline"
ROOFLINE_JS = """
var f = Array.from(document.querySelectorAll('figure')).find(function (x) {
  return x.querySelector('figcaption').textContent.indexOf('Roofline') === 0; });
if (!f) return null;
var s = f.querySelector('svg.chart'), r = s.getBoundingClientRect();
var dots = Array.from(s.querySelectorAll('circle')).filter(function (c) {
  var q = c.getBoundingClientRect(); return q.width > 0 && q.height > 0; });
var lines = Array.from(s.querySelectorAll('polyline'));
return {width: r.width, height: r.height, dots: dots.length, roofs: lines.length,
        dashed: lines.filter(function (l) { return l.getAttribute('stroke-dasharray'); }).length};
"""


@needs_browser
def test_the_roofline_chart_draws_every_counted_kernel(browser, tmp_path):
    """A real CPU breakdown with the measured ceilings: the roofline chart opens with no console
    error and no request, with one visible circle per counted kernel and one line per measured
    ceiling (this CPU is not in the datasheet table: no dashed line); a circle's tooltip names
    its kernel and its % of peak."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    from inductor_bench.core.rundir import load_breakdown

    from .test_html import run

    page = tmp_path / "roofline.html"
    run(["report", str(ROOFLINE), "--html", str(page)])
    result = load_breakdown(ROOFLINE)
    # each generated kernel with a byte count, and each extern call site (3 addmm, 5 mm) on its own
    counted = sum(1 for g in result.measured() for k in g.kernels if k.bytes is not None and k.category
                  != "extern_gemm") + sum(len(g.site_counts) for g in result.measured())
    load = browser.open(page)
    assert load.errors == []
    assert load.requests == [load.url]
    chart = browser.driver.execute_script(ROOFLINE_JS)
    assert chart is not None and chart["width"] > 300 and chart["height"] > 200
    assert chart["dots"] == counted == 13
    assert chart["roofs"] == len(result.roofline.measured.tflops) and chart["dashed"] == 0
    dot = browser.driver.find_elements(By.CSS_SELECTOR, "svg.chart circle")[0]
    ActionChains(browser.driver).move_to_element(dot).perform()
    tip = browser.driver.find_element(By.ID, "tip")
    assert tip.is_displayed() and "of peak" in tip.text
    shot = tmp_path / "roofline.png"
    browser.screenshot(shot)
    assert shot.stat().st_size > 10_000


def _value(cell: str) -> float:
    """A cell's number as the tool printed it, the test's own reading: a mark (^ in cache,
    ~ latency, ! above the compute ceiling) aside, scaled by its unit (kB, MB; MFLOP)."""
    import re

    m = re.match(r"\s*[\^~!]?([\d.]+)\s*([kMG]?)(B|FLOP)?", cell)
    return float(m[1]) * {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[m[2]]


@needs_browser
def test_sorting_reads_marks_and_units_and_leaves_tables_of_quantities(browser, pages, tmp_path):
    """The roofline table sorts "bytes" (kB beside MB) and the kernel table "% peak" (^221%
    beside 160%) by value, descending on the first click; compare's table of quantities (a row
    per quantity, a column per mode) does not sort on a click."""
    from selenium.webdriver.common.by import By

    from .test_html import run

    page = tmp_path / "roofline-sort.html"
    run(["report", str(ROOFLINE), "--html", str(page)])
    browser.open(page)
    d = browser.driver
    for table in d.find_elements(By.CSS_SELECTOR, "table"):
        heads = [h.text for h in table.find_elements(By.CSS_SELECTOR, "thead th")]
        for name in ("bytes", "% peak"):
            if name not in heads:
                continue
            i = heads.index(name) + 1
            table.find_elements(By.CSS_SELECTOR, "thead th")[i - 1].click()
            cells = [td.text for td in table.find_elements(By.CSS_SELECTOR, f"tbody td:nth-child({i})")
                     if td.text.strip() not in ("", "-")]
            assert [_value(c) for c in cells] == sorted(map(_value, cells), reverse=True), cells
    marked = d.execute_script("return Array.from(document.querySelectorAll('td')).filter("
                              "function (t) { return /^\\^\\d/.test(t.textContent); }).length")
    assert marked > 0  # the page has in-cache marks to sort by
    browser.open(pages["compare"])
    table = d.find_element(By.CSS_SELECTOR, "table.fixed")
    before = [r.text for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")]
    table.find_elements(By.CSS_SELECTOR, "thead th")[1].click()
    assert [r.text for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")] == before


GROUPS_JS = """
return Array.from(document.querySelectorAll('table.g tbody')).map(function (b) {
  return Array.from(b.rows).map(function (r) { return r.cells[0].textContent + '|' +
    r.cells[r.cells.length - 1].textContent; }); });
"""


@needs_browser
def test_sorting_moves_a_groups_rows_together(browser, tmp_path):
    """`--by module`: sorting by "ms" reorders the groups, each with its "+ module" rows right
    after its first row, and the total stays last."""
    from selenium.webdriver.common.by import By

    from .test_html import run

    page = tmp_path / "by-module.html"
    run(["report", str(RUNS / "cpu_checkpoint_train"), "--by", "module", "--html", str(page)])
    browser.open(page)
    d = browser.driver
    before = d.execute_script(GROUPS_JS)
    assert sum(len(g) > 1 for g in before) == 5 and sum(map(len, before)) == 12 + 6
    table = d.find_element(By.CSS_SELECTOR, "table.g")
    header = table.find_elements(By.CSS_SELECTOR, "thead th")[1]
    header.click()
    header.click()  # ascending: the smallest group first
    after = d.execute_script(GROUPS_JS)
    assert sorted(after) == sorted(before) and after != before
    ms = [float(td.text) for td in table.find_elements(By.CSS_SELECTOR, "tbody tr:first-child td:nth-child(2)")]
    assert ms == sorted(ms)
    rows = [r.text for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")]
    for group in after:  # in the page's row order, each member right after its group's rows
        at = next(i for i, r in enumerate(rows) if r.startswith(group[0].split("|")[0] + " "))
        assert [r.split()[-1] for r in rows[at:at + len(group)]] == [g.split()[-1] for g in group]
    assert table.find_element(By.CSS_SELECTOR, "tfoot td").text == "total"


RUNS = ROOFLINE.parent.parent / "runs"
CLIPPED_JS = """
return Array.from(document.querySelectorAll('svg.chart')).filter(function (s) {
  return !s.querySelector('circle'); }).map(function (s) {
  var w = s.viewBox.baseVal.width, out = [];
  s.querySelectorAll('text').forEach(function (t) { var q = t.getBBox();
    if (q.x < 0 || q.x + q.width > w) out.push(t.textContent); });
  return out; }).reduce(function (a, b) { return a.concat(b); }, []);
"""
SCROLLED_JS = """
return Array.from(document.querySelectorAll('div.scroll')).filter(function (d) {
  return d.scrollWidth > d.clientWidth + 1; }).length;
"""


@needs_browser
def test_labels_fit_their_charts_and_tables_use_the_window(browser, tmp_path):
    """A 42-character Triton name is drawn whole inside its chart, and so is every label of the
    ranks' charts (``ProfilerStep#4 · rank 6``, ``wall 173.0 ms · straggler``); in a 1400 px
    window the H200 breakdown's tables (kernel names, sources, files) need no horizontal
    scrolling."""
    from .test_html import run

    trace = ROOFLINE.parent.parent / "hta" / "negative_queue_length_values_check_rank0.json.gz"
    pages = {"analyze": ["analyze", str(trace)], "h200": ["report", str(RUNS / "cuda_h200_transformer_train")],
             "ranks": ["analyze", str(ROOFLINE.parent.parent / "ranks")]}
    for name, argv in pages.items():
        run([*argv, "--html", str(tmp_path / f"{name}.html")])
    browser.driver.set_window_size(1400, 900)
    try:
        browser.open(tmp_path / "analyze.html")
        assert "</title>triton__0d1d2d3d4d5d6d7d8d9d10d11d12d13d14</text>" in (tmp_path / "analyze.html").read_text()
        assert browser.driver.execute_script(CLIPPED_JS) == []
        load = browser.open(tmp_path / "ranks.html")
        assert load.errors == [] and len(browser.charts()) == 2
        assert "straggler</text>" in (tmp_path / "ranks.html").read_text()
        assert browser.driver.execute_script(CLIPPED_JS) == []
        browser.open(tmp_path / "h200.html")
        assert browser.driver.execute_script(SCROLLED_JS) == 0
    finally:
        browser.driver.set_window_size(1100, 900)
