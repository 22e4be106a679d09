"""The HTML page's tables and chart labels, without a browser: a group's rows (by-module and
by-line views) share one ``<tbody>`` so sorting moves them together, summary rows stay in the
``<tfoot>``, a column is aligned by what its cells are, long names wrap between their parts,
chart tooltips print numbers as the tables do, and the roofline's caption and note say what is
drawn. ``test_html_browser.py`` checks the same pages in Chromium."""

from __future__ import annotations

import html
import json
import re
import statistics
from itertools import pairwise

import pytest

from inductor_bench.render.chart_model import Bar, Chart, Segment
from inductor_bench.render.doc import new_doc
from inductor_bench.render.format import kernel_labels
from inductor_bench.render.html_page import STYLE
from inductor_bench.render.html_svg import MAX_LABEL, svg, text_width
from inductor_bench.render.roofline_chart import roofline_title
from inductor_bench.render.roofline_svg import Roof

from .conftest import FIXTURES
from .test_html import RESULTS, run

RUNS = FIXTURES / "runs"
TAG = re.compile(r"<[^>]+>")


def text(markup: str) -> str:
    return html.unescape(TAG.sub("", markup)).strip()


def cells(row: str) -> list[str]:
    return [text(c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)]


def table_after(page: str, heading: str) -> str:
    """The first table after the heading that starts with ``heading``."""
    at = page.index(f"<h2>{heading}")
    return re.search(r"<table[^>]*>.*?</table>", page[at:], re.S)[0]


def foot(table: str) -> list[list[str]]:
    part = re.search(r"<tfoot>(.*?)</tfoot>", table, re.S)
    return [cells(r) for r in re.findall(r"<tr>(.*?)</tr>", part[1], re.S)] if part else []


def one_table(rows: list[list[str]], headers: list[str]) -> str:
    doc = new_doc("html")
    doc.table(rows, headers)
    return doc.render().split("<main>")[1]


# -- groups ------------------------------------------------------------------------------------


def test_a_groups_member_rows_share_its_body(tmp_path):
    """`--by module`: each "+ module" row is in the <tbody> of its group's first row, one body
    per group, so a sort (which moves bodies) cannot split a group."""
    page = run(["report", str(RUNS / "cpu_checkpoint_train"), "--by", "module", "--format", "html"])
    table = table_after(page, "Time by module")
    assert table.startswith('<table class="g">')
    bodies = re.findall(r"<tbody>(.*?)</tbody>", table, re.S)
    groups = [[cells(r) for r in re.findall(r"<tr>(.*?)</tr>", b, re.S)] for b in bodies]
    assert [g[0][0] for g in groups] == [str(i) for i in range(1, 13)]  # one body per numbered group
    members = [row for g in groups for row in g[1:]]
    assert len(members) == 6 and all(m[0] == "" and m[-1].startswith("+ ") for m in members)
    assert all(row[0] for g in groups for row in g[:1])  # no body starts with a member row
    five = groups[4]
    assert [r[-1] for r in five] == ["blocks.1 (Block)", "+ blocks.1.up (Linear)"]
    assert foot(table)[0][:2] == ["total", "17.872"]


def test_a_table_without_groups_keeps_one_body():
    table = one_table([["a", "1"], ["", "2"], ["total", "3"]], ["name", "ms"])
    assert "<table>" in table and table.count("<tbody>") == 1


# -- summary rows ------------------------------------------------------------------------------


def test_summary_rows_stay_at_the_foot():
    table = one_table(
        [
            ["aten::mm", "3", "1.000", "40.0%"],
            ["total_kernel_x", "1", "0.500", "20.0%"],  # a data row that only starts like one
            ["12 other ops", "40", "0.200", "8.0%"],
            ["(in no op: Python between ops)", "", "0.800", "32.0%"],
            ["total (profiled)", "", "2.500", "100.0%"],
        ],
        ["op", "calls", "ms", "% outside"],
    )
    assert [r[0] for r in foot(table)] == ["12 other ops", "(in no op: Python between ops)", "total (profiled)"]
    body = re.search(r"<tbody>(.*?)</tbody>", table, re.S)[1]
    assert "total_kernel_x" in body


def test_the_all_graphs_row_stays_at_the_foot_of_the_graph_table():
    page = run(["report", str(RUNS / "cpu_mlp_train_stalled"), "--format", "html"])
    graphs = table_after(page, "Graphs")
    assert [r[:2] for r in foot(graphs)] == [["all graphs", "2 graph(s)"]]
    assert "all graphs" not in re.search(r"<tbody>(.*?)</tbody>", graphs, re.S)[1]


def test_the_screenshots_result_shows_the_steady_means_of_its_samples():
    """The README's screenshot (real: a quiet CPU breakdown of ``models/mlp.py``): its all-graphs
    row is the sum of each graph's mean over the iterations it kept, computed here from the raw
    samples; each top kernel has its % of peak and a source line."""
    result = RESULTS / "cpu_mlp_train_quiet"
    data = json.loads((result / "breakdown.json").read_text())
    kept = [[x for i, x in enumerate(g["wall_samples_ms"]) if i not in g["left_out"]] for g in data["graphs"]]
    means = [statistics.fmean(xs) for xs in kept]
    page = run(["report", str(result), "--format", "html"])
    graphs = table_after(page, "Graphs")
    assert [foot(graphs)[0][i] for i in (0, 1, 3)] == ["all graphs", "2 graph(s)", f"{sum(means):.3f}"]
    top = table_after(page, "Top 13 of 13 kernels")
    rows = [cells(r) for r in re.findall(r"<tr>(.*?)</tr>", top, re.S)][1:]
    assert len(rows) == 13 and all(r[8].endswith("%") and ".py:" in r[9] for r in rows)


def test_the_steady_mean_of_the_steps_stays_at_the_foot():
    page = run(["analyze", str(FIXTURES / "hta" / "negative_queue_length_values_check_rank0.json.gz"),
                "--format", "html"])
    steps = table_after(page, "Steps (per device)")
    assert [r[:2] for r in foot(steps)] == [["steady mean", "0"]]
    assert steps.count("ProfilerStep#") == 5 and "ProfilerStep#" not in steps.split("<tfoot>")[1]


def test_the_outside_ops_and_the_in_no_op_rows_stay_at_the_foot():
    page = run(["report", str(RUNS / "cpu_fft_inference"), "--format", "html"])
    ops = table_after(page, "Outside the graphs, by op")
    assert [r[0] for r in foot(ops)][-2:] == ["(in no op: Python between ops)", "total (profiled)"]
    python = one_table([["the model", "0.600", "75.0%", "fwd 0.5"], ["torch", "0.200", "25.0%", ""],
                        ["total (in no op)", "0.800", "100.0%", ""]], ["whose Python", "ms", "% in no op", "frame"])
    assert [r[0] for r in foot(python)] == ["total (in no op)"]


# -- alignment and wrapping --------------------------------------------------------------------


def aligned(rows: list[list[str]]) -> list[bool]:
    """Whether each column of a one-table page is right-aligned."""
    head = re.search(r"<thead><tr>(.*?)</tr>", one_table(rows, [f"c{i}" for i in range(len(rows[0]))]))[1]
    return ['class="r"' in th for th in re.findall(r"<th[^>]*>", head)]


def test_a_column_is_aligned_by_what_its_cells_are():
    # shapes are text whatever their count; an estimate "~45%" is a number; so is a fraction, a
    # change, a spread and an interval; a word ("ok", "new") among numbers keeps them right
    assert aligned([["512, 64x512, 512x512", "~45%", "27/34", "1 -> 14", "2.813 ±1.9%", "0 (FFTMix)"],
                    ["64x512", "38%", "30/36", "2 -> 2", "1.11x [1.06x-1.17x] (significant)", "1 (FFTMix)"]]
                   ) == [False, True, True, True, True, False]
    assert aligned([["512, 64x512, 512x512"]]) == [False]  # alone, not right-aligned by its "512"
    assert aligned([["+289.5% [+278.5%..+300.7%]", "ok", "blocks.0"], ["new", "9.92 s", "stem"]]) == [
        True, True, False]


def test_long_names_wrap_between_their_parts():
    name = "cpp_fused_gelu_gelu_backward_native_layer_norm_native_layer_norm_backward_sum_1"
    table = one_table([[name, "1"]], ["kernel", "ms"])
    cell = re.search(r'<td class="w">(.*?)</td>', table)[1]
    assert cell.startswith("cpp_<wbr>fused_<wbr>gelu_<wbr>") and cell.replace("<wbr>", "") == name
    # on screen a name breaks at its parts, not anywhere; on paper, where a wide table cannot
    # scroll, a part wider than its column breaks inside rather than be cut at the page's edge
    screen, paper = STYLE.split("@media print")
    assert "overflow-wrap:anywhere" not in screen and "td code{overflow-wrap:anywhere}" in paper
    assert "max-width:1100px" not in STYLE


# -- charts ------------------------------------------------------------------------------------


def titles(s: str) -> list[str]:
    return [html.unescape(t) for t in re.findall(r"<title>(.*?)</title>", s, re.S)]


def test_tooltips_print_times_as_the_tables_do():
    c = Chart("t", "ms per step", [
        Bar("step", [Segment(0.7356, "busy", "busy"), Segment(12345.678, "idle", "idle")],
            spread=(0.00012, 23456.7)),
        Bar("small", [Segment(-0.0123, "x")]),
    ])
    tips = "\n".join(titles(svg(c)))
    assert "busy: 0.736 ms per step" in tips and "idle: 12345.678 ms per step" in tips
    assert "x: -0.012 ms per step" in tips
    assert "spread: 0.0001 to 23456.700 ms per step" in tips
    assert "e+" not in tips and "e-" not in tips
    seconds = svg(Chart("c", "seconds", [Bar("default", [Segment(9.921, "default")])]))
    assert "default: 9.92 seconds" in titles(seconds)[-1]


def test_a_kernel_called_once_is_one_call():
    page = run(["report", str(RUNS / "cpu_checkpoint_train"), "--format", "html"])
    tips = " ".join(titles(page))
    assert " · 1 call · " in tips and "1 calls" not in tips


def test_a_long_label_is_cut_to_the_label_column_with_its_name_whole_in_the_tooltip():
    name = "triton__0d1d2d3d4d5d6d7d8d9d10d11d12d13d14"
    s = svg(Chart("t", "ms", [Bar(name, [Segment(1.0, "triton_other")]), Bar("short", [Segment(2.0, "x")])]))
    bar_x = float(re.search(r'<rect class="b[^"]*" x="([\d.]+)"', s)[1])
    shown = re.search(r'text-anchor="end"><title>[^<]*</title>([^<]*)</text>', s)[1]
    assert shown == name and bar_x - 6 >= text_width(name) + 6  # ends 6 px before the bars, 6 px in
    long = "at::native::" + "x" * 300
    s = svg(Chart("t", "ms", [Bar(long, [Segment(1.0, "x")])]))
    label = re.search(r'text-anchor="end"><title>[^<]*</title>([^<]*)</text>', s)[1]
    assert "…" in label and text_width(html.unescape(label)) <= MAX_LABEL
    assert long in titles(s)[0]



def test_two_kernels_cut_to_the_same_bar_label_are_told_apart():
    # synthetic: two CUDA kernels whose 80-character table labels differ only in the middle
    # (MulFunctor / DivFunctor; tile 128 / 256), which a cut to the chart's label column dropped:
    # each pair read "vectorized_elementwise_kernel<…ray<char*, 3> >" and
    # "sm90_xmma_gemm_bf16bf16_bf16…nel__5x_cublas" alike
    mul = ("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, "
           "float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3> >(int, "
           "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> "
           ">, at::detail::Array<char*, 3>)")
    gemm = ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
            "segment_k_off_kernel__5x_cublas")
    names = [mul, mul.replace("MulFunctor", "DivFunctor"), gemm, gemm.replace("128x128x64", "256x128x64"),
             "triton_poi_fused_add_0"]
    bars = [Bar(x, [Segment(1.0, "extern_gemm")], full=n) for x, n in zip(kernel_labels(names), names, strict=True)]
    s = svg(Chart("t", "ms", bars))
    shown = [html.unescape(x) for x in re.findall(r'text-anchor="end"><title>[^<]*</title>([^<]*)</text>', s)]
    assert len(set(shown)) == 5 and all(text_width(x) <= MAX_LABEL for x in shown)
    assert "MulFunctor" in shown[0] and "DivFunctor" in shown[1]
    assert "tilesize128x128x64" in shown[2] and "tilesize256x128x64" in shown[3]
    assert shown[4] == "triton_poi_fused_add_0"


def test_each_roofline_ceiling_names_its_figures_on_hover():
    # recorded: the quiet CPU run measured 36.2 GB/s and fp32 0.103, fp16/bf16 0.219, int8 0.445
    # TOP/s (its roofline section's ceilings line); a ceiling's tooltip named it alone
    page = run(["report", str(FIXTURES / "results" / "cpu_mlp_train_quiet"), "--format", "html"])
    tips = [html.unescape(t) for t in re.findall(r"<g><title>([^<]*)</title><polyline", page)]
    assert tips == ["measured fp32: 36.2 GB/s, 0.103 TFLOP/s", "measured fp16/bf16: 36.2 GB/s, 0.219 TFLOP/s",
                    "measured int8: 36.2 GB/s, 0.445 TOP/s"]
    assert "TFLOP/s fp32 0.103, fp16/bf16 0.219, int8 0.445 TOP/s" in page  # the section's line


def test_the_roofline_caption_and_note_say_what_is_drawn():
    page = run(["report", str(FIXTURES / "results" / "cpu_mlp_train_roofline"), "--format", "html"])
    fig = re.search(r"<figure><figcaption>Roofline.*?</figure>", page, re.S)[0]
    caption = text(re.search(r"<figcaption>(.*?)</figcaption>", fig)[1])
    assert caption == "Roofline: each kernel against the measured ceilings"  # no datasheet line here
    assert "stroke-dasharray=\"6 4\"" not in fig
    note = text(re.search(r'<p class="fine">(.*?)</p>', fig)[1])
    assert "Hollow" not in note and "Pale circles in the strip at the left" in note
    assert re.search(r'<circle[^>]*fill-opacity="0.3"', fig)  # the strip's circles, drawn pale
    strip = re.findall(r'<circle[^>]*fill-opacity="0.3"[^>]*><title>(.*?)</title>', fig, re.S)
    assert strip and all(" · no FLOP count · " in t and "- TFLOP/s" not in t for t in strip)
    measured, sheet = Roof("measured fp32", 100.0, 1.0), Roof("datasheet fp32", 200.0, 2.0, dashed=True)
    assert roofline_title([measured, sheet]).endswith("(datasheet dashed)")
    assert roofline_title([sheet]) == "Roofline: each kernel against the datasheet's ceilings (dashed)"


def _y_axis(page: str) -> str:
    """The roofline's vertical axis label (the rotated text)."""
    return html.unescape(re.search(r'transform="rotate\(-90[^"]*">([^<]*)</text>', page)[1])


def test_the_roofline_axis_names_int8_tops_where_an_int8_ceiling_is_drawn():
    # recorded: the quiet CPU run measured an int8 ceiling (0.445 TOP/s), drawn on an axis that
    # read "TFLOP/s (log)"; the roofline run measured fp32 alone: its axis is unchanged
    quiet = run(["report", str(FIXTURES / "results" / "cpu_mlp_train_quiet"), "--format", "html"])
    assert _y_axis(quiet) == "TFLOP/s, int8 TOP/s (log)"
    fp32 = run(["report", str(FIXTURES / "results" / "cpu_mlp_train_roofline"), "--format", "html"])
    assert _y_axis(fp32) == "TFLOP/s (log)"


def test_an_int8_kernels_point_reads_tops_on_the_axis_and_its_tooltip():
    """Synthetic: an int8 GEMM of 4e6 integer operations and 1e6 bytes in 0.04 ms (0.1 TOP/s,
    25 GB/s) under an fp32 ceiling alone: its point is of TOP/s, and the axis says so."""
    from inductor_bench.core.ceilings import Ceilings, Roofline
    from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
    from inductor_bench.render.roofline_chart import roofline_chart
    from inductor_bench.render.roofline_svg import scatter_svg

    def chart(compute: str):
        k = KernelStat("cpp_fused_q", "extern_gemm", 1.0, 0.04, bytes=1e6, flops=4e6, compute=compute,
                       samples_ms=[0.04] * 5)
        g = GraphResult("0-inference", "inference", kernels=[k], calls=1.0, wall_ms=0.05, busy_ms=0.04,
                        kernel_ms=0.04)
        return roofline_chart(BreakdownResult("s", graphs=[g], roofline=Roofline(
            Ceilings("cpu", gbps=40.0, tflops={"fp32": 0.2}))))

    rate, gbps = f"{4e6 / 0.04e-3 / 1e12:g}", f"{1e6 / 0.04e-3 / 1e9:g}"  # 0.1 and 25
    int8 = chart("int8")
    assert f" · {gbps} GB/s · {rate} TOP/s · " in int8.points[0].label
    assert _y_axis(scatter_svg(int8)) == "TFLOP/s, int8 TOP/s (log)"
    fp32 = chart("fp32")
    assert f" · {gbps} GB/s · {rate} TFLOP/s · " in fp32.points[0].label
    assert _y_axis(scatter_svg(fp32)) == "TFLOP/s (log)"


def test_the_names_of_a_gpus_ceilings_do_not_print_over_each_other():
    """An H200's measured and datasheet ceilings end a few pixels apart (fp8 1400 and int8
    1450 TFLOP/s: 1 px; datasheet fp32 67 over measured 51: 6 px): each name at least a line
    (13 px) from the next, in the order of the lines, joined to its line where moved."""
    from inductor_bench.render.roofline_svg import Point, Scatter, scatter_svg

    measured = {"fp32": 51.0, "tf32": 380.0, "fp16/bf16": 760.0, "fp8": 1400.0, "int8": 1450.0}
    sheet = {"fp32": 67.0, "tf32": 495.0, "fp16/bf16": 989.0, "fp8": 1979.0}
    roofs = [Roof(f"measured {k}", 4238.0, v) for k, v in measured.items()]
    roofs += [Roof(f"datasheet {k}", 4800.0, v, dashed=True) for k, v in sheet.items()]
    s = scatter_svg(Scatter("r", [Point("k", "extern_gemm", 1.0, 100.0, 300.0, 60.0)], roofs))
    groups = re.findall(r"<g><title>([^<]*)</title>(.*?)</g>", s)
    assert [g[0] for g in groups] == [r.label for r in roofs]
    ends, names = {}, {}
    for name, body in groups:
        line = re.search(r'<polyline class="wh" fill="none" points="([^"]*)"( stroke-dasharray)?', body)
        ends[name] = float(line[1].split()[-1].split(",")[1])  # where the line ends, at the right
        assert bool(line[2]) == name.startswith("datasheet")  # the datasheet dashed, measured solid
        names[name] = float(re.search(r'<text class="tick" x="[^"]*" y="([^"]*)"', body)[1])
        assert (abs(names[name] - ends[name]) > 0.5) == ('stroke-width="0.6"' in body)  # the leader
    assert abs(ends["measured fp8"] - ends["measured int8"]) < 2.0  # the lines do end that close
    ys = sorted(names.values())
    assert min(b - a for a, b in pairwise(ys)) >= 13.0 - 0.05
    by_end = sorted(names, key=lambda n: (ends[n], names[n]))
    assert by_end == sorted(names, key=names.get)  # the names in the order of their lines


def test_tick_labels_never_print_over_each_other():
    """A diff's small changes (thousandths of a ms) between long kernel names and long notes
    leave the axis under 300 px: fewer ticks there, each label at least 6 px from the next
    ('-0.0010' to '0.0020' every 0.0005 printed over each other)."""
    bars = [Bar("k" * 59 + str(i), [Segment(v, "x")], note="+" + "9" * 17)
            for i, v in enumerate((0.001849, 0.000718, 0.000491, 0.001035, -0.000525))]
    s = svg(Chart("t", "ms per step", bars))
    ticks = [(float(x), t) for x, t in re.findall(
        r'<text x="([0-9.]+)" y="[0-9.]+" dy="0.35em" class="tick" text-anchor="middle">([^<]*)</text>', s)][:-1]
    assert len(ticks) >= 3 and ticks[-1][1] != "ms per step"
    assert min((b[0] - a[0]) - (text_width(a[1]) + text_width(b[1])) / 2 for a, b in pairwise(ticks)) >= 6 - 0.1


def test_a_roofline_circle_is_sized_by_its_time_in_the_script():
    """Of a script whose first graph ran 5 times and its second once, two kernels of 0.04 ms a
    call: the first's circle stands for 0.2 ms of the script, the second's for 0.04 ms, so its
    area is a fifth (radius 16 / sqrt 5), and the tooltip gives both times."""
    from inductor_bench.core.ceilings import Ceilings, Roofline
    from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
    from inductor_bench.render.roofline_chart import roofline_chart
    from inductor_bench.render.roofline_svg import scatter_svg

    def graph(gid: str, calls: float) -> GraphResult:
        k = KernelStat(f"cpp_fused_{gid[0]}", "cpp_pointwise", 1.0, 0.04, bytes=1e6, samples_ms=[0.04] * 5)
        return GraphResult(gid, "inference", kernels=[k], calls=calls, wall_ms=0.05, busy_ms=0.04,
                           kernel_ms=0.04)

    r = BreakdownResult("s", script=True, graphs=[graph("0-inference", 5.0), graph("1-inference", 1.0)],
                        roofline=Roofline(Ceilings("cpu", gbps=40.0, tflops={"fp32": 0.2})))
    chart = roofline_chart(r)
    radii = [float(x) for x in re.findall(r'<circle[^>]*r="([0-9.]+)"', scatter_svg(chart))]
    assert radii == [16.0, pytest.approx(16 / 5**0.5, abs=0.05)]
    assert "0.040 ms a call of its graph, 0.200 ms in the script · " in chart.points[0].label
    assert chart.note.startswith("A circle's area is the kernel's time in the script (all its graph's calls).")


def test_an_int8_kernels_row_gives_its_integer_operations_their_unit():
    """Synthetic, as above: the roofline table's row of the int8 GEMM reads 4 MOP and 0.1 TOP/s
    under the FLOPs and TFLOP/s columns, where it read 4 MFLOP and a bare 0.1; an fp32 row keeps
    its FLOPs."""
    from inductor_bench.core.ceilings import Ceilings, Roofline
    from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
    from inductor_bench.render.breakdown import render_breakdown

    def row(compute: str) -> list[str]:
        k = KernelStat("cpp_fused_q", "extern_gemm", 1.0, 0.04, bytes=1e6, flops=4e6, compute=compute,
                       samples_ms=[0.04] * 5)
        g = GraphResult("0-inference", "inference", kernels=[k], calls=1.0, wall_ms=0.05, busy_ms=0.04,
                        kernel_ms=0.04)
        text = render_breakdown(BreakdownResult("s", graphs=[g], roofline=Roofline(
            Ceilings("cpu", gbps=40.0, tflops={"fp32": 0.2}))), width=200)
        section = text[text.index("How far from the limit"):]
        return next(ln for ln in section.splitlines() if ln.startswith("0-inference")).split()

    assert row("int8")[5:10] == ["4", "MOP", "25", "0.1", "TOP/s"]
    assert row("fp32")[5:9] == ["4", "MFLOP", "25", "0.1"]
