"""The HTML report (``--format html``, ``--html PATH``, ``index.html`` in a run directory),
without a browser: every command renders a page from recorded results, the page is one file
that loads nothing, its text is escaped, its charts and links are there, and its links work
from where the page is written. ``test_html_browser.py`` opens the same pages in Chromium."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest

from inductor_bench.cli import main
from inductor_bench.commands import kernel as kernel_cmd
from inductor_bench.commands.output import write_report
from inductor_bench.core.rundir import HTML_REPORT_FILE, REPORT_FILE, load_any
from inductor_bench.render.chart_model import Bar, Chart, Segment
from inductor_bench.render.doc import new_doc
from inductor_bench.render.html_page import CATEGORY_COLOURS, SCRIPT, series_class, with_base
from inductor_bench.render.html_svg import nice_step, svg

from .conftest import FIXTURES, ROOT

RESULTS = FIXTURES / "results"
KERNELS = FIXTURES / "triton_kernels" / "synthetic_cuda"
BREAKDOWN = RESULTS / "cpu_mlp_train_autotune"

# name -> (command line, canned kernel-worker response or None, charts the page draws)
CASES: dict[str, tuple[list[str], str | None, int]] = {
    "breakdown-cpu": (["report", str(BREAKDOWN)], None, 3),
    "breakdown-cpu-slow": (["report", str(RESULTS / "cpu_mlp_slow_train")], None, 3),
    "breakdown-cuda": (["report", str(RESULTS / "synthetic_cuda_breakdown")], None, 3),
    # a run with source lines: the top kernels are the units view (extern calls one row per
    # call site), charted like the plain top kernels
    "breakdown-sourced": (["report", str(FIXTURES / "runs" / "cpu_mlp_train_stalled")], None, 3),
    "compare": (["report", str(RESULTS / "cpu_mlp_compare")], None, 3),
    "diff": (["diff", str(BREAKDOWN), str(RESULTS / "cpu_mlp_slow_train")], None, 3),
    "diff-compare": (["diff", *[str(RESULTS / "cpu_mlp_compare")] * 2], None, 3),
    "analyze": (["analyze", str(FIXTURES / "hta_small" / "event_sync_trace.json.gz")], None, 3),
    # several ranks: their steps, and time by category per rank
    "analyze-ranks": (["analyze", str(FIXTURES / "ranks")], None, 2),
    "kernel-all-configs": (
        ["kernel", str(KERNELS / "triton_red_fused_sum_0.py"), "--max-autotune", "--all-configs"],
        "max_autotune",
        2,
    ),
    "kernel-template": (
        ["kernel", str(KERNELS / "triton_tem_fused_mm_0.py"), "--max-autotune"],
        "baseline",
        1,
    ),
}


@contextlib.contextmanager
def canned_kernel_worker(response: str | None):
    """The kernel worker answers with a saved (synthetic) response: no GPU needed."""
    if response is None:
        yield
        return
    responses = json.loads((RESULTS / "synthetic_kernel_responses.json").read_text())
    real = kernel_cmd.run_kernel_bench
    kernel_cmd.run_kernel_bench = lambda kf, **kw: responses[response]
    try:
        yield
    finally:
        kernel_cmd.run_kernel_bench = real


def run(argv: list[str]) -> str:
    """The command's stdout (its exit status 0 or 1: a diff that finds a regression)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main(argv)
        except SystemExit as e:
            assert e.code in (None, 0, 1), e.code
    return out.getvalue()


def write_pages(dest: Path) -> dict[str, Path]:
    """Every case's page, written with ``--html`` into ``dest`` (its links pointing back at the
    fixtures), and a run directory's own ``index.html``."""
    dest.mkdir(parents=True, exist_ok=True)
    pages = {}
    for name, (argv, response, _) in CASES.items():
        with canned_kernel_worker(response):
            run([*argv, "--html", str(dest / f"{name}.html")])
        pages[name] = dest / f"{name}.html"
    run_dir = dest / "run"
    shutil.copytree(BREAKDOWN, run_dir)
    write_report(run_dir, load_any(run_dir))
    pages["index"] = run_dir / HTML_REPORT_FILE
    return pages


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    return write_pages(tmp_path_factory.mktemp("html"))


# -- every command ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", [*CASES, "index"])
def test_page_is_one_file_that_loads_nothing(pages, name):
    page = pages[name].read_text()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    # nothing to fetch: no external element, style import or url(); the only absolute web
    # address is Perfetto's, as a link to click
    assert not re.search(r"<(link|img|iframe|object|embed|audio|video)\b", page)
    assert "@import" not in page and "url(" not in page
    assert not re.search(r"\bsrc=", page)
    assert set(re.findall(r'href="(https?://[^"]*)"', page)) <= {"https://ui.perfetto.dev"}
    # and the page says so to the browser: a policy that allows its own inline script only
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    assert f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'" in page
    assert f"<script>{SCRIPT}</script>" in page
    assert len(page) < 200_000


@pytest.mark.parametrize("name", CASES)
def test_each_command_draws_its_charts(pages, name):
    page = pages[name].read_text()
    assert page.count('<svg class="chart"') == CASES[name][2]
    assert page.count("<table") >= 1


def test_format_html_on_stdout_is_the_same_page(pages, monkeypatch):
    monkeypatch.chdir(ROOT)
    argv = CASES["breakdown-cpu"][0]
    printed = run([*argv, "--format", "html"])
    base = 'href="tests/fixtures/results/cpu_mlp_train_autotune/"'
    assert base in printed  # links start from the run directory, seen from the current one
    written = pages["breakdown-cpu"].read_text()
    assert re.sub(r'<base href="[^"]*">', "", printed) == re.sub(r'<base href="[^"]*">', "", written)


def test_text_and_markdown_stay_as_they_were(monkeypatch):
    """The HTML options change nothing else: the goldens hold the text and markdown."""
    monkeypatch.chdir(ROOT)
    argv = ["report", "tests/fixtures/results/cpu_mlp_slow_train"]
    golden = FIXTURES / "golden" / "report-cpu_mlp_slow_train"
    for fmt, ext in (("text", "txt"), ("markdown", "md")):
        assert run([*argv, "--format", fmt]) == Path(f"{golden}.{ext}").read_text()


# -- links -----------------------------------------------------------------------------------


def test_run_directory_gets_an_index_beside_its_text_report(pages):
    run_dir = pages["index"].parent
    assert (run_dir / REPORT_FILE).exists()
    page = pages["index"].read_text()
    assert "<base" not in page.split("</head>")[0].replace("<!-- base -->", "")
    for graph in ("0-forward", "0-backward"):
        assert f'href="graphs/{graph}/trace.json.gz"' in page
        assert f'href="graphs/{graph}/module.py"' in page
    assert "ui.perfetto.dev" in page and "Open trace file" in page


def test_links_resolve_from_where_the_page_is_written(pages, tmp_path):
    page = pages["breakdown-cpu"]
    base = re.search(r'<base href="([^"]*)">', page.read_text())[1]
    assert (page.parent / unquote(base) / "breakdown.json").resolve() == (BREAKDOWN / "breakdown.json").resolve()


def test_kernel_files_are_linked_relative_to_the_run_directory(pages):
    page = pages["breakdown-cuda"].read_text()
    assert '<a href="graphs/0-forward/kernels/triton_red_fused_sum_3.py">' in page
    kernel = pages["kernel-all-configs"].read_text()
    base = re.search(r'<base href="([^"]*)">', kernel)[1]
    href = re.search(r'file: <a href="([^"]*)">', kernel)[1]
    assert (pages["kernel-all-configs"].parent / unquote(base) / unquote(href)).resolve() == (
        KERNELS / "triton_red_fused_sum_0.py"
    ).resolve()


def test_compare_links_each_modes_page(pages):
    page = pages["compare"].read_text()
    assert 'href="default/index.html"' in page and 'href="max-autotune/index.html"' in page


def test_with_base_only_when_the_page_is_elsewhere():
    page = new_doc("html").render()
    assert with_base(page, ".") == page
    assert '<base href="../runs/a%20b/">' in with_base(page, "../runs/a b")


# -- the document ----------------------------------------------------------------------------


def test_text_is_escaped_and_markup_survives_composition():
    doc = new_doc("html")
    doc.title("x <y> & z")
    doc.paragraph(f"{doc.strong('a<b')} then {doc.code('c&d')}", doc.link("f<1>.py", "dir/f 1.py"))
    doc.table([["k<T>", "1.5"], ["total", "2"]], ["kernel", "ms"])
    body = doc.render().split("<main>")[1]
    assert "<h1>x &lt;y&gt; &amp; z</h1>" in body
    assert "<strong>a&lt;b</strong> then <code>c&amp;d</code>" in body
    assert '<a href="dir/f%201.py">f&lt;1&gt;.py</a>' in body
    assert '<td>k&lt;T&gt;</td><td class="r">1.5</td>' in body
    assert "<tfoot><tr><td>total</td>" in body  # a sum stays at the foot when sorted
    assert "\ue000" not in body


def test_analyze_kernel_names_are_escaped(pages):
    page = pages["analyze"].read_text()
    assert "reduce_kernel&lt;512" in page and "reduce_kernel<512" not in page


def test_text_and_markdown_leave_charts_and_file_lists_out():
    chart = Chart("t", "ms", [Bar("a", [Segment(1.0, "extern_gemm")])])
    for fmt in ("text", "markdown"):
        doc = new_doc(fmt)
        doc.paragraph("x")
        doc.chart(chart)
        doc.links("files", [("a", "a.py")], "note")
        assert doc.render() == "x\n" and doc.link("t", "p") == "t"


def test_a_category_has_one_colour_on_every_page(pages):
    rule = f".{series_class('extern_gemm')}{{fill:{CATEGORY_COLOURS['extern_gemm']};"
    for name in ("breakdown-cpu", "compare", "diff", "analyze"):
        assert rule in pages[name].read_text()
    assert len(set(CATEGORY_COLOURS.values())) == len(CATEGORY_COLOURS)


def test_chart_axis_and_bars():
    c = Chart(
        "t",
        "ms per step",
        [Bar("up", [Segment(3.2, "a"), Segment(1.1, "b")]), Bar("down", [Segment(-0.7, "c")])],
    )
    s = svg(c)
    ticks = re.findall(r'class="tick"[^>]*>([^<]*)<', s)
    assert ticks[0] == "-1" and ticks[-2] == "5" and ticks[-1] == "ms per step"
    assert s.count('<rect class="b') == 3 and 'class="zero"' in s
    assert [nice_step(x) for x in (10, 0.37, 4.2e-3, 1)] == [2, 0.1, 1e-3, 0.2]


def _colour_rules(page: str) -> set[str]:
    """The classes the page's style sheet gives a fill."""
    return set(re.findall(r"\.([A-Za-z0-9_-]+)\{fill:", page))


@pytest.mark.parametrize("name", [*CASES, "index"])
def test_every_bar_has_a_colour(pages, name):
    page = pages[name].read_text()
    bars = set(re.findall(r'<rect class="b ([^"]+)"', page))
    assert bars and bars <= _colour_rules(page)


def test_a_diffs_kernels_of_one_code_and_unnamed_series_are_coloured():
    """A diff's kernels of the same code on both sides (or called another number of times) are
    grey, as the note says, and a series with no colour of its own (a comparison of two model
    files names its columns 'mlp:default', 'mlp_slow25:default') gets one of its own: no bar is the SVG's
    default black, which a dark page would not show at all."""
    from dataclasses import replace

    from inductor_bench.core.diff import CategoryDiff, KernelDiff, SectionDiff
    from inductor_bench.core.stats import judge, summarize
    from inductor_bench.core.vocab import Verdict
    from inductor_bench.render.charts_compare import diff_categories, diff_kernels
    from inductor_bench.render.html_page import page as html_page

    change = judge(summarize([1.0] * 9), summarize([1.02] * 9))
    kernels = [KernelDiff(v, "0-forward", f"k{i}", "extern_gemm", [], 1.0, 1.02 + i / 100, change=change)
               for i, v in enumerate((Verdict.SAME_CODE, Verdict.CALLS_CHANGED))]
    section = SectionDiff("default", change, "harness", kernels=kernels,
                          categories=[CategoryDiff("extern_gemm", replace(change, verdict=Verdict.SAME_CODE))])
    chart = diff_kernels(section, 10)
    pale = diff_categories(section)
    assert pale.bars[0].faint and "the same code on both sides" in pale.note
    models = Chart("t", "ms", [Bar(m, [Segment(1.0, m)]) for m in ("mlp:default", "mlp_slow25:default", "lite")])
    doc = new_doc("html")
    doc.chart(chart)
    doc.chart(models)
    page = html_page("t", doc.render())
    rules = _colour_rules(page)
    classes = re.findall(r'<rect class="b ([^"]+)"', page)
    assert len(classes) == 5 and set(classes) <= rules
    assert len(set(classes[2:])) == 3  # the three unnamed series: three colours
    grey = {c: re.search(rf"\.{c}\{{fill:(#[0-9a-f]+)", page).group(1) for c in classes[:2]}
    assert grey == {"k-same-code": "#b4b8bd", "k-calls-changed": "#7d8590"}
    assert "the same code on both sides" in page
