"""One figure per quantity, the same everywhere, on a recorded disturbed run.

``tests/fixtures/runs/cpu_mlp_train_stalled`` is a whole run directory of ``breakdown
models/mlp.py --train --device cpu``, recorded beside processes that stalled the machine at
random for 20-100 ms (``scripts/disturbers.py stall``): 16 of 39 forward iterations are left
out as disturbed. Every check below recomputes the figure here from the raw record (the
trace's markers, the per-iteration samples) by the rule as docs/statistics.md states it, and
checks that the sections and the commands (report text, markdown, JSON, HTML, diff, compare)
show that same figure.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import shutil
import statistics
import subprocess
import sys

import pytest

from inductor_bench.cli import main
from inductor_bench.core.analysis import kept_clock
from inductor_bench.core.breakdown import analyze_graph
from inductor_bench.core.categories import label
from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.core.devices import canonical_name
from inductor_bench.core.diff import diff_results
from inductor_bench.core.results import GraphResult
from inductor_bench.core.rundir import load_breakdown
from inductor_bench.core.trace import load_for_analysis
from inductor_bench.core.views import by_line, by_module, units
from inductor_bench.render import format as fmt
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.render.compare import render_compare
from inductor_bench.render.diff import render_diff

from .conftest import FIXTURES, ROOT
from .no_torch import CLI_WITHOUT_TORCH
from .steady_rule import kept_profiled, kept_rounds, limit_of_repeats

RUN = FIXTURES / "runs" / "cpu_mlp_train_stalled"
LEFT_OUT = 16  # of the forward graph's 39 iterations


def marker_walls(gid: str) -> list[float]:
    """Iteration wall times (ms) read straight from the graph's trace."""
    with gzip.open(RUN / "graphs" / gid / "trace.json.gz") as f:
        doc = json.loads(f.read())
    marks = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "user_annotation"
             and e["name"] == "inductor_bench::iteration"]
    return [e["dur"] / 1000 for e in sorted(marks, key=lambda e: e["ts"])]


def worker_clock(gid: str) -> list[float]:
    """The worker's own clock reading of each iteration of the kept window (its raw response)."""
    response = json.loads((RUN / "graphs" / gid / "profile.json").read_text())["response"]
    return response["window_samples_ms"][response["window"]]


def parts(g) -> list[list[float]]:
    """What an iteration is made of: each kernel's time in it, each call's of a kernel called
    more than once (its call sites), and its idle time (wall - busy)."""
    idle = [w - b for w, b in zip(g.wall_samples_ms, g.busy_samples_ms, strict=True)]
    return [k.samples_ms for k in g.kernels] + [s.samples_ms for s in g.sites] + [idle]


def eager_and(result) -> CompareResult:
    """A compare whose default column is ``result`` (its figures are the breakdown's own)."""
    return CompareResult(model="mlp", device="cpu", modes=[
        ModeResult(mode="eager", compile_s=0.0, step_samples_ms=[9.0] * 5),
        ModeResult(mode="default", compile_s=1.0, step_samples_ms=[9.0] * 5, breakdown=result)])


def mean_over(xs: list[float], idx: list[int]) -> float:
    return math.fsum(xs[i] for i in idx) / len(idx)


@pytest.fixture(scope="module")
def result():
    return load_breakdown(RUN)


def test_the_fixture_is_disturbed_and_the_rule_left_the_stalls_out(result):
    fwd = result.graph("0-forward")
    walls = marker_walls("0-forward")
    assert fwd.wall_samples_ms == pytest.approx(walls, abs=1e-9)
    kept = kept_profiled(walls, parts(fwd), worker_clock("0-forward"))
    assert sorted(set(range(len(walls))) - set(kept)) == fwd.left_out
    assert len(fwd.left_out) == LEFT_OUT and len(walls) == 39
    # the plain mean over all iterations, which the figures used to be, is far off
    assert statistics.fmean(walls) > 1.2 * fwd.wall_ms


@pytest.mark.parametrize("gid", ["0-forward", "0-backward"])
def test_every_figure_of_a_graph_is_the_mean_over_the_same_steady_iterations(result, gid):
    g = result.graph(gid)
    kept = kept_profiled(marker_walls(gid), parts(g), worker_clock(gid))
    assert g.wall_ms == pytest.approx(mean_over(g.wall_samples_ms, kept), rel=1e-12)
    assert g.busy_ms == pytest.approx(mean_over(g.busy_samples_ms, kept), rel=1e-12)
    for k in g.kernels:
        assert k.ms == pytest.approx(mean_over(k.samples_ms, kept), rel=1e-12), k.name
    assert all(b <= w + 1e-9 for b, w in zip(g.busy_samples_ms, g.wall_samples_ms, strict=True))
    assert g.busy_ms <= g.wall_ms


def test_the_iterations_the_workers_clock_found_slow_are_left_out_and_counted(result):
    """The windows are ranked by the worker's clock; the figures leave out what it found slow
    too, and the report says how many of the left-out iterations that was: the counts (over the
    wall limit, then the others slow by the clock, then the rest) add up to those left out."""
    text = render_breakdown(result, "text")
    for gid in ("0-forward", "0-backward"):
        g, clock = result.graph(gid), worker_clock(gid)
        assert g.clock_samples_ms == clock
        slow = {i for i, c in enumerate(clock) if c > limit_of_repeats(clock)}
        assert slow <= set(g.left_out)
        line = f"({sum(1 for i in g.left_out if g.wall_samples_ms[i] > g.limit_ms)} over the wall limit"
        shown = re.search(re.escape(f"{gid} {len(g.left_out)} of ") + r"\d+ " + re.escape(line) + r"[^)]*\)", text)
        assert shown, gid
        slow_only = slow - {i for i in g.left_out if g.wall_samples_ms[i] > g.limit_ms}
        assert (f"; {len(slow_only)} more slow by the worker's clock" in shown.group(0)) == bool(slow_only), shown.group(0)
        # every left-out iteration is accounted for: the rest were left out by one of their parts
        walls = marker_walls(gid)
        over = {i for i, w in enumerate(walls) if w > limit_of_repeats(walls)}
        by_part = set(range(len(walls))) - set(kept_profiled(walls, parts(g), clock)) - over - slow
        assert by_part == set(g.left_out) - over - slow
        assert (f"; {len(by_part)} more by one kernel or idle gap" in shown.group(0)) == bool(by_part), shown.group(0)
        counts = [int(n) for n in re.findall(r"(?:\(|; )(\d+) (?:over the wall|more)", shown.group(0))]
        assert sum(counts) == len(g.left_out), shown.group(0)
    assert len({i for i, c in enumerate(worker_clock("0-forward")) if c > limit_of_repeats(worker_clock("0-forward"))}) == 14
    assert ("0-backward 28 of 47 (26 over the wall limit 4.766 ms, the faster half's: most iterations stalled, "
            "up to 12.148 ms;") in text
    assert "0-forward 16 of 39 (14 over the wall limit 3.941 ms, up to" in text  # its median lies below


def test_a_clock_not_recorded_or_not_aligned_is_not_used():
    """An older run's response has no clock readings; a clock whose iterations are not the
    trace's cannot be matched with them: the trace's readings alone decide."""
    assert kept_clock({}) == [] and kept_clock({"window": None, "window_samples_ms": [[1.0]]}) == []
    assert kept_clock({"window": 2, "window_samples_ms": [[1.0]]}) == []
    assert kept_clock({"window": 1, "window_samples_ms": [[1.0], [2.0, 3.0]]}) == [2.0, 3.0]
    trace = load_for_analysis(RUN / "graphs" / "0-forward" / "trace.json.gz")
    clock = worker_clock("0-forward")
    g = analyze_graph(trace, None, GraphResult(id="0-forward", role="forward"), clock=clock[:-1])
    assert g.clock_samples_ms == []
    assert g.left_out == sorted(set(range(len(clock))) - set(kept_profiled(marker_walls("0-forward"), parts(g))))
    aligned = analyze_graph(trace, None, GraphResult(id="0-forward", role="forward"), clock=clock)
    assert aligned.clock_samples_ms == clock and set(g.left_out) <= set(aligned.left_out)


@pytest.mark.parametrize("gid", ["0-forward", "0-backward"])
def test_kernels_categories_and_call_sites_add_up_exactly(result, gid):
    g = result.graph(gid)
    for cat, ms in g.categories.items():
        assert ms == pytest.approx(math.fsum(k.ms for k in g.kernels if k.category == cat), rel=1e-12)
    assert g.kernel_ms == pytest.approx(math.fsum(g.categories.values()), rel=1e-12)
    assert g.kernel_ms == pytest.approx(math.fsum(k.ms for k in g.kernels), rel=1e-12)
    for k in g.kernels:
        sites = [s for s in g.sites if s.kernel == k.name]
        if sites:
            assert math.fsum(s.ms for s in sites) == pytest.approx(k.ms, rel=1e-12), k.name


def test_graphs_add_up_to_the_step_and_views_to_the_kernel_time(result):
    t = result.totals()
    gs = result.measured()
    assert t.wall_ms == pytest.approx(math.fsum(g.wall_ms for g in gs), rel=1e-12)
    assert t.kernel_ms == pytest.approx(math.fsum(g.kernel_ms for g in gs), rel=1e-12)
    assert t.busy_ms == pytest.approx(math.fsum(g.busy_ms for g in gs), rel=1e-12)
    assert math.fsum(t.categories.values()) == pytest.approx(t.kernel_ms, rel=1e-12)
    assert result.step_summary().ms == pytest.approx(t.wall_ms, rel=1e-12)
    assert result.kernel_summary().ms == pytest.approx(t.kernel_ms, rel=1e-12)
    us = units(gs)
    assert math.fsum(u.ms for u in us) == pytest.approx(t.kernel_ms, rel=1e-12)
    for view in (by_line(us), by_module(us), by_module(us, 1)):
        assert math.fsum(grp.ms for grp in view) == pytest.approx(t.kernel_ms, rel=1e-12)
    assert (t.iterations, t.left_out) == (39 + 47, LEFT_OUT + 28)


def test_the_report_shows_one_figure_per_graph_in_every_section(result):
    text = render_breakdown(result)
    for g in result.measured():
        row = next(ln for ln in text.splitlines() if ln.startswith(g.id + " "))
        assert fmt.ms(g.wall_ms) in row.split() and fmt.ms(g.kernel_ms) in row.split()
        assert f"{g.id} {fmt.ms(g.wall_ms)} ms, on the worker's clock" in text  # the windows line
        assert f"Graph {g.id}: {fmt.ms(g.wall_ms)} ms wall" in render_breakdown(result, by="op")
        # the kernel view's graph section: the same wall, busy and kernel time, and each
        # category's time, summed here from its kernels' rows
        assert f"{fmt.ms(g.wall_ms)} ms wall, busy {fmt.pct(g.busy_pct)}, {fmt.ms(g.kernel_ms)} ms of kernels" in text
        for cat in g.categories:
            cat_ms = math.fsum(k.ms for k in g.kernels if k.category == cat)
            heading = f"{g.id} · {label(cat)}: {fmt.ms(cat_ms)} ms, {fmt.pct(100 * cat_ms / g.kernel_ms)} of"
            assert heading in text, heading
    assert "23/39" in text and f"0-forward {LEFT_OUT} of 39" in text
    step_row = next(ln for ln in text.splitlines() if ln.startswith("all graphs "))
    assert fmt.ms(result.totals().wall_ms) in step_row.split()


def module_calls(gid: str) -> tuple[int, set[str]]:
    """The graph's saved module, read as text: its extern calls, and the kernels it calls."""
    text = (RUN / "graphs" / gid / "module.py").read_text()
    body = text[text.index("def call("):]
    externs = len(re.findall(r"^\s+(?:\w+ = )?extern_kernels\.\w+\(", body, re.M))
    return externs, set(re.findall(r"^\s+(cpp_fused\w+)\(", body, re.M))


def test_every_kernels_count_is_the_rows_the_kernel_tables_list(result, capsys):
    """The graph table, the time by category, the top list, compare and the JSON count the
    same rows: each generated kernel once and each extern call once, as the module calls them."""
    want = {}
    for gid in ("0-forward", "0-backward"):
        externs, kernels = module_calls(gid)
        want[gid] = externs + len(kernels)
    assert want == {"0-forward": 3 + 2, "0-backward": 5 + 3}
    text = render_breakdown(result)
    for gid, n in want.items():
        row = next(ln for ln in text.splitlines() if ln.startswith(gid + " "))
        assert row.split()[-2] == str(n), row
    total = sum(want.values())
    step_row = next(ln for ln in text.splitlines() if ln.startswith("all graphs "))
    assert step_row.split()[-1] == str(total)
    cats = text[text.index("Time by category"):text.index("Top ")].splitlines()
    assert [ln.split()[:3] for ln in cats if ln.startswith(("GEMM", "total"))] == [
        ["GEMM", "(extern)", "8"], ["total", str(total), fmt.ms(result.totals().kernel_ms)]]
    assert f"Top 13 of {total} kernels and extern calls" in text
    ctext = render_compare(eager_and(result))
    assert next(ln for ln in ctext.splitlines() if ln.startswith("kernels ")).split()[-1] == str(total)
    main(["report", str(RUN), "--format", "json"])
    assert json.loads(capsys.readouterr().out)["totals"]["kernel_count"] == total


def test_diff_counts_each_extern_op_once_with_its_calls_summed(result):
    """diff matches kernels by name: an extern op's calls in a graph are one row (and one count)."""
    want = 0
    for gid in ("0-forward", "0-backward"):
        body = (RUN / "graphs" / gid / "module.py").read_text()
        body = body[body.index("def call("):]
        ops = set(re.findall(r"^\s+(?:\w+ = )?extern_kernels\.(\w+)\(", body, re.M))
        want += len(ops) + len(module_calls(gid)[1])
    assert want == (1 + 2) + (1 + 3)  # addmm and two C++ kernels; mm and three
    assert f"{want} matched kernel(s) and extern op(s)" in render_diff(diff_results(result, result))


def test_diff_html_json_and_compare_show_the_same_figures(result, capsys):
    t = result.totals()
    d = diff_results(result, result)
    s = d.sections[0]
    assert (s.step.base.ms, s.kernel_time.base.ms) == (pytest.approx(t.wall_ms), pytest.approx(t.kernel_ms))
    for cd in s.categories:
        assert cd.change.base.ms == pytest.approx(t.categories[cd.category])
    by_name = {(g.id, k.name): k.ms for g in result.measured() for k in g.kernels}
    for kd in s.kernels:
        assert kd.base_ms == pytest.approx(by_name[(kd.graph, kd.name)]) == kd.head_ms
    diff_text = render_diff(d)
    assert f"default: all graphs {fmt.ms_precise(t.wall_ms)} -> {fmt.ms_precise(t.wall_ms)} ms" in diff_text

    html = render_breakdown(result, "html")
    for g in result.measured():
        assert fmt.ms(g.wall_ms) in html and fmt.ms(g.kernel_ms) in html

    main(["report", str(RUN), "--format", "json"])
    js = json.loads(capsys.readouterr().out)
    assert js["totals"]["wall_ms"] == pytest.approx(t.wall_ms)
    assert js["totals"]["categories"] == pytest.approx(t.categories)

    ctext = render_compare(eager_and(result))
    for cat, ms in t.categories.items():
        share = fmt.pct(fmt.share(ms, t.kernel_ms))
        row = next(ln for ln in ctext.splitlines() if ln.startswith("% ") and share in ln)
        assert row.split()[-1] == share, cat
    assert f"{t.busy_pct:.1f}%" in next(ln for ln in ctext.splitlines() if ln.startswith("busy %"))


def test_reanalysis_without_torch_reproduces_the_saved_result(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    r = subprocess.run([sys.executable, "-c", CLI_WITHOUT_TORCH, "report", str(run), "--reanalyze", "--format", "json"],
                       capture_output=True, text=True,
                       cwd=ROOT, timeout=300, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "re-analysed 2 graph(s)" in r.stderr
    saved = json.loads((RUN / "breakdown.json").read_text())
    again = json.loads((run / "breakdown.json").read_text())
    assert again["run_dir"] == str(run)  # the copy is read where it lies: all that differs,
    # with the host's name as this version writes it ("1 thread" where the record says "1 threads")
    assert again == saved | {"run_dir": str(run), "device_name": canonical_name(saved["device_name"])}
    assert json.loads(r.stdout) == again
    assert json.loads((run / "breakdown.before-reanalysis.json").read_text()) == saved


def test_reanalysis_rejudges_a_result_saved_with_other_figures(tmp_path):
    """A run whose saved figures came from an older analysis (here: the plain mean over all
    iterations) is judged again by this one."""
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    data = json.loads((run / "breakdown.json").read_text())
    for g in data["graphs"]:
        g["wall_ms"] = statistics.fmean(g["wall_samples_ms"])
        g["left_out"] = []
        g.pop("limit_ms", None)
    data["schema_version"] = 2
    (run / "breakdown.json").write_text(json.dumps(data))
    old = load_breakdown(run)
    assert "means over every profiled iteration" in render_breakdown(old)
    main(["report", str(run), "--reanalyze", "--summary"])
    new = load_breakdown(run)
    assert new.schema_version == 4
    assert new.graph("0-forward").wall_ms == pytest.approx(load_breakdown(RUN).graph("0-forward").wall_ms)
    assert new.graph("0-forward").wall_ms < old.graph("0-forward").wall_ms


def test_one_iteration_left_out_by_one_part_is_counted_so():
    """Synthetic: four iterations under the wall limit, the third left out by one of its parts."""
    from inductor_bench.core.results import BreakdownResult, GraphResult
    from inductor_bench.render.breakdown_graphs import steady_note
    from inductor_bench.render.doc import new_doc

    g = GraphResult(id="0-forward", role="forward", frame_id=0, frame_compile_id=0, iterations=4, wall_ms=1.0,
                    wall_samples_ms=[1.0, 1.0, 1.02, 1.0], left_out=[2], limit_ms=1.1)
    note = steady_note(BreakdownResult(model="m", graphs=[g]), new_doc())
    assert note.endswith("0-forward 1 of 4 (0 over the wall limit 1.100 ms, up to 1.020 ms; 1 more by one kernel "
                         "or idle gap).")


def test_the_json_s_step_block_holds_the_report_s_outside_and_max_gain_figures(result, capsys):
    """The step's figures the report's lines show (the outside line, the max gain note) are in
    the JSON's ``step`` block, each the same figure: recomputed here from the saved turns by the
    rule written out again (tests/steady_rule.py: a round kept where its step and each graph's
    block are within their limits), and read in the text at the printed precision."""
    main(["report", str(RUN), "--format", "json"])
    step = json.loads(capsys.readouterr().out)["step"]
    t = result.step_turns
    def figure(block: list[float]) -> float:  # its steady mean (fewer than 5 calls: all kept)
        return statistics.fmean([x for x in block if len(block) < 5 or x <= limit_of_repeats(block)])

    rounds = [[figure(side[r]) for side in t.blocks] for r in range(len(t.blocks[0]))]
    walls, graphs = [x[0] for x in rounds], [[x[i] for x in rounds] for i in range(1, len(t.blocks))]
    kept = kept_rounds(walls, graphs)
    assert (step["rounds"], step["rounds_left_out"]) == (len(kept), len(walls) - len(kept))
    assert step["step_ms"] == pytest.approx(statistics.fmean(walls[i] for i in kept), rel=1e-9)
    assert step["outside_ms"] == pytest.approx(
        statistics.fmean(walls[i] - sum(g[i] for g in graphs) for i in kept), rel=1e-9)
    text = " ".join(render_breakdown(result).split())
    assert (f"outside the graphs: {step['outside_ms']:.3f} ms per step ({100 * step['outside_ms'] / step['step_ms']:.1f}% "
            f"of the {step['step_ms']:.3f} ms step, its graphs' own calls the other {step['graphs_ms']:.3f} ms") in text
    frame = step["max_gain_of"]
    assert f"max gain = the kernel's share of {frame['wall_ms']:.3f} ms, the all-graphs row's {frame['graphs_ms']:.3f} ms" in text


def test_a_second_reanalysis_keeps_the_runs_own_result_and_says_which_it_kept(tmp_path, capsys):
    """The first re-analysis keeps the result the run wrote as breakdown.before-reanalysis.json;
    a second keeps that one (not the first re-analysis's) and says it is the run's own."""
    from inductor_bench.cli import main

    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    saved = (RUN / "breakdown.json").read_text()
    kept = run / "breakdown.before-reanalysis.json"
    for said in (f"(the result it replaced: {kept})", f"(the run's own result, before any re-analysis: {kept})"):
        try:
            main(["report", str(run), "--reanalyze", "--format", "json"])
        except SystemExit as e:
            assert not e.code
        assert said in capsys.readouterr().err
        assert kept.read_text() == saved
