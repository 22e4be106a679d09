"""The op view's % peak of an extern op called at several places: its calls each judged on
its own and weighed by their time, latency-bound ones left out, as the views by line and
module weigh a group; the same cell in text, Markdown and HTML."""

from __future__ import annotations

import json
import re

import pytest

from inductor_bench.core.ceilings import Ceilings, Roofline
from inductor_bench.core.result_json import result_json
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.core.sources import CallSite
from inductor_bench.render.breakdown import render_breakdown

GBPS, TFLOPS = 100.0, 1.0  # ridge at 10 FLOP/byte
HOST_FLOOR_US, SLACK = 10.0, 2.0  # a host launch's cost, and how far past it a launch is still short

# aten::mm called at three places: (calls, ms, bytes, FLOPs), each per iteration
CALLS = [
    (1.0, 1.0, 1e6, 0.5e9),  # a large GEMM: compute-bound
    (1.0, 0.5, 10e6, 1e7),  # 1 FLOP/byte: memory-bound, 100 µs at best
    (100.0, 0.4, 10e6, 1e7),  # 100 launches of 4 µs, 1 µs each at best: too short to reach a limit
]


def _result(calls: list[tuple[float, float, float, float]] = CALLS) -> BreakdownResult:
    ms = sum(c[1] for c in calls)
    mm = KernelStat("aten::mm", "extern_gemm", sum(c[0] for c in calls), ms,
                    bytes=sum(c[2] for c in calls), flops=sum(c[3] for c in calls), compute="fp32")
    sites = [CallSite("aten::mm", i, "extern_kernels.mm", n, t) for i, (n, t, _, _) in enumerate(calls)]
    g = GraphResult("0-inference", "inference", iterations=1, wall_ms=ms, kernel_ms=ms, busy_ms=ms,
                    categories={"extern_gemm": ms}, kernels=[mm], sites=sites,
                    site_counts=[[b, f] for _, _, b, f in calls])
    ceilings = Ceilings("test device", gbps=GBPS, tflops={"fp32": TFLOPS})
    return BreakdownResult("m", graphs=[g], roofline=Roofline(ceilings))


def _expected() -> tuple[float, float, float]:
    """(the calls' time-weighted %, the share of the op's time it is over, the pooled %)."""
    num = den = 0.0
    for calls, ms, moved, flops in CALLS:
        roof = min(TFLOPS, flops / moved * GBPS / 1e3)  # TFLOP/s at its intensity
        pct = 100 * flops / (ms / 1e3) / 1e12 / roof
        ideal_us = max(moved / (GBPS * 1e9), flops / (TFLOPS * 1e12)) * 1e6 / calls
        if ideal_us < HOST_FLOOR_US and ms * 1e3 / calls < SLACK * (HOST_FLOOR_US + ideal_us):
            continue  # latency-bound: its % says how short it is
        num, den = num + pct * ms, den + ms
    total = sum(c[1] for c in CALLS)
    moved, flops = sum(c[2] for c in CALLS), sum(c[3] for c in CALLS)
    pooled = 100 * flops / (total / 1e3) / 1e12 / min(TFLOPS, flops / moved * GBPS / 1e3)
    return num / den, 100 * den / total, pooled


def _pct_cells(text: str) -> list[str]:
    """The % peak cells of the text report's aten::mm rows (the top table's, the graph's)."""
    rows = [re.split(r"\s{2,}", ln.strip()) for ln in text.splitlines() if re.search(r"aten::mm(?! #)", ln)]
    return [[c for c in row if "%" in c][-1] for row in rows]


def test_the_op_views_percent_of_peak_weighs_each_call_and_leaves_out_the_short_ones():
    pct, share, pooled = _expected()
    assert (round(pct), round(share), round(pooled)) == (40, 79, 27)  # the three figures differ
    cell = f"{pct:.0f}% (over {share:.0f}% of kernel time)"
    r = _result()
    text = render_breakdown(r, by="op", width=250)
    assert _pct_cells(text) == [cell, cell]  # the top kernels and the graph's table
    assert f"{pooled:.0f}%" not in _pct_cells(text)
    assert "% peak of an extern op called at several places: its calls' time-weighted %" in " ".join(text.split())
    for form in ("markdown", "html"):
        assert render_breakdown(r, form, by="op").count(cell) == 2, form
    # the JSON holds each call's own figures, from which the cell is made
    figures = json.loads(result_json(r))["extras"]["roofline"]["kernels"]
    judged = [(k["pct"], CALLS[i][1]) for i, k in enumerate(sorted(figures, key=lambda k: k["kernel"]))
              if k["bound"] != "latency"]
    assert sum(p * t for p, t in judged) / sum(t for _, t in judged) == pytest.approx(pct)


def test_an_op_called_at_one_place_keeps_its_own_cell():
    r = _result()
    g = r.graphs[0]
    (calls, ms, moved, flops) = CALLS[2]
    g.kernels[0] = KernelStat("aten::mm", "extern_gemm", calls, ms, bytes=moved, flops=flops, compute="fp32")
    g.sites, g.site_counts = [CallSite("aten::mm", 0, "extern_kernels.mm", calls, ms)], [[moved, flops]]
    g.wall_ms = g.kernel_ms = g.categories["extern_gemm"] = ms
    pct = 100 * flops / (ms / 1e3) / 1e12 / (flops / moved * GBPS / 1e3)
    text = render_breakdown(r, by="op", width=250)
    assert _pct_cells(text) == [f"~{pct:.0f}%"] * 2  # latency-bound, marked as any kernel is
    assert "called at several places" not in text


def test_an_op_whose_calls_are_all_too_short_keeps_its_marked_cell():
    """Two calls of 10 launches, 4 and 6 µs each, 1 µs at best: neither is a distance to a limit;
    the row reads the op's own figure, marked latency-bound as a kernel's row is, not a bare dash."""
    calls = [(10.0, 0.04, 1e6, 1e6), (10.0, 0.06, 1e6, 1e6)]
    moved, flops, ms = 2e6, 2e6, 0.1
    pct = 100 * flops / (ms / 1e3) / 1e12 / (flops / moved * GBPS / 1e3)
    assert _pct_cells(render_breakdown(_result(calls), by="op", width=250)) == [f"~{pct:.0f}%"] * 2


def _short_pct(calls: list[tuple[float, float, float, float]]) -> float:
    """The calls' time-weighted %, each latency-bound (asserted), from their raw figures."""
    num = 0.0
    for n, ms, moved, flops in calls:
        roof = min(TFLOPS, flops / moved * GBPS / 1e3)
        ideal_us = max(moved / (GBPS * 1e9), flops / (TFLOPS * 1e12)) * 1e6 / n
        assert ideal_us < HOST_FLOOR_US and ms * 1e3 / n < SLACK * (HOST_FLOOR_US + ideal_us)
        num += 100 * flops / (ms / 1e3) / 1e12 / roof * ms
    return num / sum(c[1] for c in calls)


def _group_cells(text: str, heading: str) -> list[str]:
    """The % peak cells of a view's group rows and total row (the cells marked ``~`` or a dash)."""
    table = text.split(heading, 1)[1].split("\n\n")[1]
    rows = [re.split(r"\s{2,}", ln.strip()) for ln in table.splitlines() if re.match(r"\s*(\d+|total)\s", ln)]
    return [row[4] for row in rows]


def test_a_group_whose_kernels_are_all_too_short_reads_their_marked_percent():
    """Two calls of aten::mm, 10 launches of 4 and 6 µs, 1 and 0.4 µs at best, at 4 and 40
    FLOP/byte: both latency-bound. The views by module and by line read the group's (and the
    total's) time-weighted % of its calls marked ``~``, not a bare dash, and the op view reads
    the same figure, not the calls' % pooled (11 %)."""
    calls = [(10.0, 0.04, 1e6, 4e6), (10.0, 0.06, 1e5, 4e6)]
    pct = _short_pct(calls)
    moved, flops, ms = 1.1e6, 8e6, 0.1
    pooled = 100 * flops / (ms / 1e3) / 1e12 / min(TFLOPS, flops / moved * GBPS / 1e3)
    assert (round(pct, 1), round(pooled)) == (14.0, 11)
    r = _result(calls)
    for by, heading in (("module", "Time by module"), ("line", "Time by source line")):
        assert _group_cells(render_breakdown(r, by=by, width=250), heading) == [f"~{pct:.1f}%"] * 2, by
    assert _pct_cells(render_breakdown(r, by="op", width=250)) == [f"~{pct:.0f}%"] * 2


def test_diff_holds_an_op_called_at_several_places_to_the_op_views_figure(tmp_path, capsys):
    """diff's % of peak of that aten::mm (JSON ``base_pct``/``head_pct`` of the op's row) is the
    op view's: its calls' time-weighted % (40 %), a distance to its limit, not the calls' %
    pooled (27 %, latency-bound); and where each call is latency-bound, theirs (14 %), latency-bound."""
    from inductor_bench import cli

    pct, _, pooled = _expected()
    short = [(10.0, 0.04, 1e6, 4e6), (10.0, 0.06, 1e5, 4e6)]
    for calls, want, why in ((CALLS, pct, ""), (short, _short_pct(short), "latency-bound in base, latency-bound in head")):
        path = tmp_path / "run.json"
        path.write_text(result_json(_result(calls)))
        cli.main(["diff", str(path), str(path), "--format", "json"])
        out = json.loads(capsys.readouterr().out)
        (k,) = [k for s in out["sections"] for k in s["kernels"] if k["name"] == "aten::mm"]
        assert k["base_pct"] == pytest.approx(want) and k["head_pct"] == pytest.approx(want)
        assert k.get("no_distance", "") == why
    assert round(pooled) == 27 and round(pct) == 40


def test_the_views_say_what_a_marked_group_percent_is_only_where_one_is_shown():
    """The two latency-bound calls: each view's note says what ``~`` before a group's % peak is;
    the calls of which two reach a limit (40 %, no mark): no such words."""
    from inductor_bench.render.view_marks import SHORT_GROUP

    for calls, said in (([(10.0, 0.04, 1e6, 4e6), (10.0, 0.06, 1e5, 4e6)], True), (CALLS, False)):
        for by in ("module", "line"):
            text = " ".join(render_breakdown(_result(calls), by=by, width=250).split())
            assert (" ".join(SHORT_GROUP.split()) in text) is said, (by, said)


# two calls of aten::mm at 0.1 FLOP/byte, 10 and 20 MB in 0.05 and 0.08 ms (200 and 250 GB/s over
# a 100 GB/s ceiling; 100 and 200 µs at best, no launch too short): each served from a cache
CACHED = [(1.0, 0.05, 10e6, 1e6), (1.0, 0.08, 20e6, 2e6)]


def _cached_pct(calls: list[tuple[float, float, float, float]]) -> float:
    """The calls' time-weighted % of the bandwidth, each above it and not latency-bound (asserted)."""
    num = 0.0
    for n, ms, moved, flops in calls:
        assert flops / moved < TFLOPS * 1e12 / (GBPS * 1e9)  # under the ridge: memory-bound
        assert moved / (GBPS * 1e9) * 1e6 / n >= HOST_FLOOR_US  # long enough to reach a limit
        pct = 100 * moved / (ms / 1e3) / (GBPS * 1e9)
        assert pct > 100
        num += pct * ms
    return num / sum(c[1] for c in calls)


def test_a_group_whose_kernels_are_all_in_cache_reads_their_marked_percent():
    """The two in-cache calls (200 % and 250 %): the views by module and by line read the group's
    (and the total's) time-weighted %, 230.8 %, marked ``^`` as an in-cache kernel's is, not a dash
    that reads as unmeasured, and say under the table what ``^`` is (not what ``~`` is); the op
    view reads the same figure to the unit."""
    from inductor_bench.render.view_marks import CACHED_GROUP, SHORT_GROUP

    pct = _cached_pct(CACHED)
    assert round(pct, 1) == 230.8
    r = _result(CACHED)
    for by, heading in (("module", "Time by module"), ("line", "Time by source line")):
        text = render_breakdown(r, by=by, width=250)
        assert _group_cells(text, heading) == [f"^{pct:.1f}%"] * 2, by
        words = " ".join(text.split())
        assert " ".join(CACHED_GROUP.split()) in words and " ".join(SHORT_GROUP.split()) not in words, by
    assert _pct_cells(render_breakdown(r, by="op", width=250)) == [f"^{pct:.0f}%"] * 2


def test_a_group_of_short_and_in_cache_kernels_reads_both_marked_figures():
    """One latency-bound call (10 launches of 4 µs: 25 % of the compute roof at 4 FLOP/byte) beside
    one in cache (0.05 ms at 200 % of the bandwidth): no one reason and no mean of the two (a
    ~108 % that would read as at the limit). The views by module and by line read each part's
    figure marked as such a kernel's is, the in-cache one first (0.05 ms against 0.04), the total
    row too; text, Markdown and HTML alike; the note says what a cell of both marks is; the op
    view reads the same to the unit, not the calls' % pooled; no dash that reads as unmeasured."""
    from inductor_bench.render.view_marks import BOTH_GROUP, CACHED_GROUP, SHORT_GROUP

    short, cached = (10.0, 0.04, 1e6, 4e6), CACHED[0]
    short_pct = _short_pct([short])
    cached_pct = _cached_pct([cached])
    assert (round(short_pct, 1), round(cached_pct, 1)) == (25.0, 200.0)
    mean = (short_pct * short[1] + cached_pct * cached[1]) / (short[1] + cached[1])
    pooled = 100 * (5e6 / 0.09e-3) / 1e12 / min(TFLOPS, 5e6 / 11e6 * GBPS / 1e3)
    r = _result([short, cached])
    cell = f"^{cached_pct:.1f}%, ~{short_pct:.1f}%"
    for by, heading in (("module", "Time by module"), ("line", "Time by source line")):
        text = render_breakdown(r, by=by, width=250)
        assert _group_cells(text, heading) == [cell] * 2, by
        assert f"{mean:.1f}%" not in text, by
        words = " ".join(text.split())
        for note in (BOTH_GROUP, CACHED_GROUP, SHORT_GROUP):
            assert " ".join(note.split()) in words, (by, note)
        for form, shown in (("markdown", cell.replace("~", "\\~")), ("html", cell)):  # Markdown escapes ~
            assert render_breakdown(r, form, by=by).count(shown) == 2, (by, form)
    op_cell = f"^{cached_pct:.0f}%, ~{short_pct:.0f}%"
    assert _pct_cells(render_breakdown(r, by="op", width=250)) == [op_cell] * 2
    assert f"{pooled:.0f}%" not in op_cell


def test_a_group_of_short_kernels_beside_uncounted_time_says_how_much_it_holds():
    """That latency-bound call (0.04 ms) beside a template with no FLOP count (0.12 ms): the
    group reads the call's ~25.0 %, over the quarter of the group's time it holds, not a dash."""
    from inductor_bench.render.roofline import group_pct_cell

    short = (10.0, 0.04, 1e6, 4e6)
    r = _result([short])
    g = r.graphs[0]
    template = KernelStat("cpp_fused_flex_attention_1", "cpp_attention_template", 1.0, 0.12, bytes=1e6)
    share = 100 * 0.04 / (0.04 + 0.12)
    assert group_pct_cell(r, [(g, g.kernels[0], 0.04), (g, template, 0.12)]) == (
        f"~{_short_pct([short]):.1f}% (over {share:.0f}% of kernel time)")
    assert group_pct_cell(r, [(g, template, 0.12)]) == "-"


def test_diff_holds_an_op_of_short_and_in_cache_calls_to_the_op_views_first_figure(tmp_path, capsys):
    """diff's base_pct/head_pct of that mixed aten::mm: the figure the op view shows first, its
    in-cache call's 200 % (the longer), said as in cache; not the calls' % pooled."""
    from inductor_bench import cli

    path = tmp_path / "run.json"
    path.write_text(result_json(_result([(10.0, 0.04, 1e6, 4e6), CACHED[0]])))
    cli.main(["diff", str(path), str(path), "--format", "json"])
    (k,) = [k for s in json.loads(capsys.readouterr().out)["sections"] for k in s["kernels"] if k["name"] == "aten::mm"]
    want = _cached_pct([CACHED[0]])
    assert k["base_pct"] == pytest.approx(want) and k["head_pct"] == pytest.approx(want)
    assert k["no_distance"] == "in cache in base, in cache in head"


def test_diff_holds_an_op_whose_calls_are_all_in_cache_to_the_op_views_figure(tmp_path, capsys):
    """diff's base_pct/head_pct of that aten::mm: its calls' time-weighted %, 230.8 %, in cache."""
    from inductor_bench import cli

    path = tmp_path / "run.json"
    path.write_text(result_json(_result(CACHED)))
    cli.main(["diff", str(path), str(path), "--format", "json"])
    (k,) = [k for s in json.loads(capsys.readouterr().out)["sections"] for k in s["kernels"] if k["name"] == "aten::mm"]
    assert k["base_pct"] == pytest.approx(_cached_pct(CACHED)) and k["head_pct"] == pytest.approx(_cached_pct(CACHED))
    assert k["no_distance"] == "in cache in base, in cache in head"


OP_WORDS = ("% peak of an extern op called at several places: its calls' time-weighted %, each call judged "
            "on its own (the roofline section lists them), latency-bound and in-cache calls left out, as the "
            "views by module and line weigh a group")


def _op_note(r: BreakdownResult, **kw) -> str:
    """The op view's text, its lines joined (the note wraps), from the extern op's words on."""
    text = " ".join(render_breakdown(r, by="op", width=250, **kw).split())
    return text[text.index(OP_WORDS):].split(" How far from the limit")[0] if OP_WORDS in text else ""


def test_the_op_views_note_says_only_what_its_rows_show():
    """The op's cell of the three calls reads 40 % unmarked: the note says what it is, and nothing
    of marked figures or of two; its two latency-bound calls (~14.0 %) add the words for ~ alone;
    a short call beside an in-cache one (^200 %, ~25 %) the words for both, and the order."""
    assert _op_note(_result()) == OP_WORDS + "."
    short = [(10.0, 0.04, 1e6, 4e6), (10.0, 0.06, 1e5, 4e6)]
    assert _op_note(_result(short)) == (
        OP_WORDS + "; where none is a distance to a limit, the time-weighted % of its latency-bound calls (~).")
    assert _op_note(_result([short[0], CACHED[0]])) == (
        OP_WORDS + "; where none is a distance to a limit, the time-weighted % of its latency-bound calls (~) "
        "and of its in-cache calls (^), the one that holds more of its time first.")
    assert _op_note(_result(CACHED)) == (
        OP_WORDS + "; where none is a distance to a limit, the time-weighted % of its in-cache calls (^).")


def test_the_op_views_note_says_what_a_call_above_the_compute_ceiling_does_to_the_ops_figure():
    """A call at 2 GFLOP in 1 ms (2 TFLOP/s: 200 % of the compute ceiling) beside the memory-bound
    one at 20 %: the op's cell takes it in, marked !, and the note says why."""
    from inductor_bench.render.view_marks import LOW_GROUP

    calls = [(1.0, 1.0, 1e6, 2e9), CALLS[1]]
    # the memory-bound call: 1e7 FLOP in 0.5 ms, 0.02 TFLOP/s of its 0.1 roof at 1 FLOP/byte: 20 %
    pct = (200.0 * 1.0 + 20.0 * 0.5) / 1.5
    assert round(pct) == 140
    r = _result(calls)
    assert _pct_cells(render_breakdown(r, by="op", width=250)) == [f"!{pct:.0f}%"] * 2
    assert _op_note(r) == " ".join((OP_WORDS + "." + LOW_GROUP).split())


def test_the_op_views_note_is_left_out_where_no_row_shown_is_an_op_called_at_several_places():
    """aten::mm (0.9 ms, three calls) beside a longer copy, the top table cut to one row and no
    graphs' tables: no row shown weighs calls, so no words of them; with the graphs' tables
    (aten::mm in its own), the words again."""
    r = _result()
    g = r.graphs[0]
    g.kernels.append(KernelStat("cpp_fused_copy_1", "cpp_pointwise", 1.0, 5.0, bytes=100e6))
    g.categories["cpp_pointwise"] = 5.0
    assert _op_note(r, top=1, details=False) == ""
    assert _op_note(r, top=1).startswith(OP_WORDS + ".")


def test_the_note_on_a_marked_group_percent_says_what_the_figure_is():
    """The note under a view whose group % peak is marked ``~`` or ``^`` ended in a clause with no
    subject ('...; no distance to a limit either.'); it says what the figure tells instead."""
    for calls, what in (([(10.0, 0.04, 1e6, 4e6), (10.0, 0.06, 1e5, 4e6)], "how short they are"),
                        (CACHED, "how far past that ceiling a cache took them")):
        words = " ".join(render_breakdown(_result(calls), by="module", width=250).split())
        assert f"is a distance to a limit: like theirs, it says {what}, not how far from a limit." in words
        assert "no distance to a limit either" not in words
