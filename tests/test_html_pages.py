"""What the compare, diff and multi-rank analyze pages say, checked on recorded results: one
``<h1>`` naming what the page is, tooltips that read a number as the table beside the chart
prints it, and the ranks' charts, their numbers read again from the raw traces."""

from __future__ import annotations

import html
import json
import re

import pytest

from inductor_bench.core.rundir import load_any
from inductor_bench.render.compare import render_compare
from inductor_bench.render.format import ms

from .test_analyze_ranks import COMM_NAME, DEVICE, RANK_FILES, RANKS, independent, raw_events
from .test_html import BREAKDOWN, RESULTS, run

SLOW = RESULTS / "cpu_mlp_slow_train"
COMPARE = RESULTS / "cpu_mlp_compare"


@pytest.fixture(scope="module")
def diff_page(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("diff") / "diff.html"
    run(["diff", str(BREAKDOWN), str(SLOW), "--html", str(path)])
    return path.read_text()


@pytest.fixture(scope="module")
def ranks_page(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("ranks") / "ranks.html"
    run(["analyze", str(RANKS), "--html", str(path)])
    return path.read_text()


def headings(page: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r"<h1>(.*?)</h1>", page)]


def tips(page: str) -> list[str]:
    """Every bar's tooltip, as the reader sees it."""
    return [html.unescape(t) for t in re.findall(r'<rect class="b [^>]*><title>(.*?)</title>', page, re.S)]


def tip_value(page: str, bar: str, segment: str, unit: str = "ms") -> str:
    """The number a bar's segment's tooltip prints (``bar\\nsegment: VALUE unit...``), on the
    one chart whose unit starts with ``unit``."""
    head = re.compile(f"{re.escape(bar)}\n{re.escape(segment)}: (\\S+) {re.escape(unit)}")
    found = [m[1] for t in tips(page) if (m := head.match(t))]
    assert len(found) == 1, (bar, segment, found)
    return found[0]


def row_cells(page: str, first: str) -> list[list[str]]:
    """The cells of every table row whose first cell is ``first``."""
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", page)]
    cells = [[html.unescape(re.sub(r"<[^>]*>", "", c)) for c in r] for r in rows]
    return [r for r in cells if r and r[0] == first]  # a step's name is code: <code>ProfilerStep#4</code>


# -- one heading -------------------------------------------------------------------------------


def test_compare_page_is_headed_by_the_model_and_its_columns():
    """The columns that ran; a skipped one by its status, its reason said once, in the notes,
    in every format."""
    page = render_compare(load_any(COMPARE), "html")
    title = "inductor-bench compare: mlp: eager vs default vs max-autotune (reduce-overhead skipped)"
    assert headings(page) == [title]
    assert f"<title>{title}</title>" in page
    why = "reduce-overhead: skipped: CUDA graphs need a CUDA device (this run is on cpu); it would repeat default"
    for fmt in ("text", "markdown", "html"):
        assert render_compare(load_any(COMPARE), fmt).count("CUDA graphs need a CUDA device") == 1
        assert why in render_compare(load_any(COMPARE), fmt)


def test_compare_of_model_files_is_headed_by_the_models_and_modes():
    result = load_any(COMPARE)
    result.models = ["before", "after"]
    for m, model in zip(result.modes, ("before", "before", "after", "after"), strict=True):
        m.model = model
    page = render_compare(result, "html")
    assert headings(page) == ["inductor-bench compare: before vs after: eager, default, max-autotune "
                              "(after:reduce-overhead skipped)"]


def test_diff_page_is_headed_by_base_and_head(diff_page):
    assert headings(diff_page) == [f"inductor-bench diff: mlp -> mlp_slow: {BREAKDOWN} vs {SLOW}"]


# -- tooltips read as the tables ---------------------------------------------------------------


def test_compare_step_tooltip_reads_as_its_table_cell():
    """Under 1 ms the step time's table cell has 4 decimals: so has the bar's tooltip."""
    result = load_any(COMPARE)
    for m in result.modes:
        m.step_samples_ms = [x / 10 for x in m.step_samples_ms]
    page = render_compare(result, "html")
    [cells] = row_cells(page, "step time, ms (steady mean ± spread)")
    for mode, cell in zip(("eager", "default", "max-autotune"), cells[1:], strict=False):
        assert tip_value(page, mode, mode) == cell.split()[0]
    assert cells[1].split()[0] == "0.2813"


def test_diff_tooltips_read_as_the_table_cells(diff_page):
    [pointwise] = row_cells(diff_page, "C++ pointwise")  # base ms, head ms, change ms, ...
    assert pointwise[3] == "+0.1242"
    assert tip_value(diff_page, "C++ pointwise", "C++ pointwise") == pointwise[3]
    [added] = [r for r in row_cells(diff_page, "0-forward") if r[1] == "cpp_fused__softmax_gelu_1"]
    assert tip_value(diff_page, "cpp_fused__softmax_gelu_1", "added") == added[5] == "+0.6573"


def test_breakdown_tooltips_read_as_the_table_cells(tmp_path):
    path = tmp_path / "breakdown.html"
    run(["report", str(SLOW), "--html", str(path)])
    page = path.read_text()
    step = row_cells(page, "C++ pointwise")[0]  # the all-graphs category table comes first
    assert tip_value(page, "all graphs", "C++ pointwise") == step[2]


# -- the ranks' charts -------------------------------------------------------------------------


def test_ranks_page_draws_each_ranks_steps_and_categories(ranks_page):
    figures = re.findall(r"<figcaption>(.*?)</figcaption>", ranks_page)
    assert [html.unescape(f) for f in figures] == [
        "Steps per rank: where the wall time goes",
        "Time by category per rank (steady mean step)",
    ]


def test_ranks_step_bars_split_each_wall_as_the_raw_traces_do(ranks_page):
    """Each (step, rank) bar: compute, exposed communication and idle, as read again from the
    raw JSON (these ranks run no other steps' work), as the steps table prints them."""
    for r, path in enumerate(RANK_FILES):
        for step, e in independent(path).items():
            bar = f"{step} · rank {r}"
            parts = {"compute": e["compute"], "exposed communication": e["comm"] - e["overlap"],
                     "idle": e["wall"] - e["busy"]}
            for name, us in parts.items():
                assert tip_value(ranks_page, bar, name) == ms(us / 1e3), (bar, name)
            [row] = [c for c in row_cells(ranks_page, step) if c[1] == str(r)]
            assert tip_value(ranks_page, bar, "compute") == row[6]
            assert tip_value(ranks_page, bar, "idle") == row[5]


def test_ranks_step_bars_mark_each_steps_slowest_rank(ranks_page):
    walls = {r: {step: e["wall"] for step, e in independent(path).items()} for r, path in enumerate(RANK_FILES)}
    slowest = {(step, max(walls, key=lambda r: walls[r][step])) for step in walls[0]}
    rows = re.findall(r"<g>(.*?)</g>", ranks_page, re.S)
    marked = {html.unescape(re.search(r"</title>([^<]*)</text>", g)[1]) for g in rows if "· straggler</text>" in g}
    assert marked == {f"{step} · rank {r}" for step, r in slowest} == {"ProfilerStep#4 · rank 6",
                                                                       "ProfilerStep#5 · rank 3"}


def test_ranks_communication_per_rank_is_its_collectives_summed(ranks_page):
    """The communication segment of each rank's bar: its NCCL kernels' durations summed over
    each step (those starting in it), the mean of its two steps."""
    for r, path in enumerate(RANK_FILES):
        evs = raw_events(path)
        steps = [(e["ts"], e["ts"] + e["dur"]) for e in evs if re.fullmatch(r"ProfilerStep#\d+", e["name"])]
        sums = [sum(e["dur"] for e in evs if e.get("cat") in DEVICE and COMM_NAME.match(e["name"])
                    and a <= e["ts"] <= b) for a, b in steps]
        got = tip_value(ranks_page, f"rank {r}", "communication (collectives)")
        assert got == ms(sum(sums) / len(sums) / 1e3)
        [row] = row_cells(ranks_page, str(r))
        assert got in row[1:]



def test_a_run_of_no_kernels_draws_its_busy_chart_and_no_empty_category_chart_or_tables(tmp_path):
    # synthetic: the recorded CPU breakdown with its kernels taken out (a run whose graphs only
    # alias their inputs launches none); its category chart drew three empty bars, 0.000 ms each
    result = json.loads((RESULTS / "cpu_mlp_train_roofline" / "breakdown.json").read_text())
    for g in result["graphs"]:
        g.update(kernels=[], categories={}, busy_ms=0.0, kernel_ms=0.0, sites=[], site_counts=[],
                 busy_samples_ms=[0.0] * len(g["busy_samples_ms"]))
    result.pop("totals")
    (tmp_path / "breakdown.json").write_text(json.dumps(result))
    page = run(["report", str(tmp_path), "--format", "html"])
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", page)
    assert captions == ["Busy vs idle, per graph"]
    assert tip_value(page, "0-backward", "idle", "ms of wall time") == "9.137"
    # the text says so in one line, where it printed a category table of a 0.000 ms total and
    # headed empty tables 'Top 0 of 0 kernels' under a note on max gain
    text = run(["report", str(tmp_path)])
    assert ("No kernel or extern call ran in the measured graphs: their 11.414 ms is all the wrapper's "
            "(Python, allocation, bookkeeping).") in text
    assert "Time by category" not in text and "Top 0" not in text and "max gain" not in text


def test_compare_charts_name_the_columns_they_leave_out_and_draw_a_failed_modes_compile_time(tmp_path):
    # synthetic: the recorded comparison (reduce-overhead skipped on the CPU) with max-autotune
    # failing after its compile (9.28 s, which the table prints); the charts drew two modes with no
    # word of the other two, and left out the compile time the table beside them gives
    result = json.loads((COMPARE / "compare.json").read_text())
    failed = result["modes"][2]
    assert failed["mode"] == "max-autotune" and result["modes"][3]["status"] == "skipped"
    failed.update(status="failed", reason="step timing failed", step_samples_ms=[], breakdown=None,
                  peak_memory_bytes=None)
    (tmp_path / "compare.json").write_text(json.dumps(result))
    page = run(["report", str(tmp_path), "--format", "html"])
    assert row_cells(page, "compile (first call)")[0][3] == "9.28 s"
    assert tip_value(page, "max-autotune", "max-autotune", "seconds") == "9.28"
    notes = [html.unescape(n) for n in re.findall(r'</svg><p class="fine">(.*?)</p>', page)]
    assert notes[:2] == ["Not drawn: max-autotune (failed), reduce-overhead (skipped).",
                         "Not drawn: reduce-overhead (skipped)."]


def test_a_kernel_in_two_graphs_has_a_bar_named_with_each_graph(diff_page):
    # recorded: the slow MLP adds an aten::cumsum to the forward and one to the backward graph;
    # the biggest-changes chart drew two bars both named "aten::cumsum"
    chart = re.search(r'<svg class="chart"[^>]*aria-label="The \d+ biggest kernel changes.*?</svg>', diff_page, re.S)[0]
    names = [html.unescape(x) for x in re.findall(r'text-anchor="end"><title>[^<]*</title>([^<]*)</text>', chart)]
    assert "0-forward · aten::cumsum" in names and "0-backward · aten::cumsum" in names
    assert len(set(names)) == len(names) and "aten::mm" in names  # a kernel of one graph: its name alone


def test_the_category_chart_of_one_measured_graph_names_it_and_promises_no_other():
    # synthetic CUDA result: 0-forward measured, 0-backward timed out; the caption said "all graphs
    # and each graph" over the one bar of the all-graphs row
    page = run(["report", str(RESULTS / "synthetic_cuda_breakdown"), "--format", "html"])
    assert "Kernel time by category: all graphs (0-forward)" in re.findall(r"<figcaption>(.*?)</figcaption>", page)
    assert "and each graph" not in page
    two = run(["report", str(RESULTS / "cpu_mlp_train_quiet"), "--format", "html"])
    assert "<figcaption>Kernel time by category: all graphs and each graph</figcaption>" in two


def test_a_failed_graphs_status_is_cut_visibly_and_whole_on_hover(tmp_path):
    # synthetic: the recorded CPU breakdown with its backward failed on an 84-character error;
    # the status cell cut it at 60 characters with no mark ("...: something went wrong in ")
    result = json.loads((RESULTS / "cpu_mlp_train_roofline" / "breakdown.json").read_text())
    why = "RuntimeError: profiling 0-backward: something went wrong in the kernel <b>launch</b>"
    kept = ("id", "role", "aot_id", "frame_id", "frame_compile_id", "module", "device")
    result["graphs"][1] = {k: v for k, v in result["graphs"][1].items() if k in kept} | {
        "status": "failed", "error": why, "wall_ms": 0.0, "busy_ms": 0.0, "kernel_ms": 0.0,
        "kernels": [], "categories": {}, "iterations": 0}
    result.update(status="partial", errors=[f"0-backward: {why}"])
    result.pop("totals")
    (tmp_path / "breakdown.json").write_text(json.dumps(result))
    cell = f"failed: {why[:59]}…"
    assert cell in run(["report", str(tmp_path)])
    page = run(["report", str(tmp_path), "--format", "html"])
    shown = row_cells(page, "0-backward")[0][-1]
    assert shown == cell
    assert f'<span title="{html.escape(f"failed: {why}")}">' in page
