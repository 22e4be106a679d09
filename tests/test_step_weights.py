"""The whole step (or script) weighs each graph by how often the model called it.

A script that calls its prefill graph once and its decode graph forty times spends its time in
the decode graph; a step that calls a graph twice pays it twice. The all-graphs row, the time by
category, the top kernels, the views, the step split, diff and compare add each graph's
per-call figures times its calls (``core/step_totals.py``); every expected figure below is
computed here from the graphs' own per-call figures. Graphs whose calls were not counted
(CUDA-graph replays, older runs) weigh 1 each, as before.
"""

from __future__ import annotations

import copy
import json
import math

import pytest

from inductor_bench.core.diff import diff_results
from inductor_bench.core.outside import OutsideOp, OutsideProfile
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat, StepTurns
from inductor_bench.core.rundir import load_breakdown
from inductor_bench.core.step import (
    gain_frame,
    split_in_turns,
    split_step,
    turns_outside_off,
    turns_slowdown,
    turns_step_off,
)
from inductor_bench.core.summaries import summarize_steady
from inductor_bench.core.views import by_line, by_module, step_units, units
from inductor_bench.render import format as fmt
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.render.compare import render_compare
from inductor_bench.render.diff import render_diff

from .conftest import FIXTURES
from .test_identities import eager_and

RUN = FIXTURES / "runs" / "cpu_mlp_train_stalled"
BACKWARD_CALLS = 3.0  # synthetic: the recorded run's backward graph as if the step called it 3 times


@pytest.fixture(scope="module")
def recorded():
    return load_breakdown(RUN)


@pytest.fixture
def weighed(recorded):
    """The recorded disturbed run (tests/test_identities.py), its calls set here (synthetic):
    the forward once per step, the backward three times."""
    r = copy.deepcopy(recorded)
    for g in r.graphs:
        g.calls = BACKWARD_CALLS if g.role == "backward" else 1.0
    return r


def _w(g: GraphResult) -> float:
    return BACKWARD_CALLS if g.role == "backward" else 1.0


def test_the_step_is_each_graphs_figure_times_its_calls(weighed):
    gs = weighed.measured()
    t = weighed.totals()
    assert t.weights == {"0-forward": 1.0, "0-backward": BACKWARD_CALLS}
    assert t.wall_ms == pytest.approx(math.fsum(_w(g) * g.wall_ms for g in gs), rel=1e-12)
    assert t.kernel_ms == pytest.approx(math.fsum(_w(g) * g.kernel_ms for g in gs), rel=1e-12)
    assert t.busy_ms == pytest.approx(math.fsum(_w(g) * g.busy_ms for g in gs), rel=1e-12)
    for cat, ms in t.categories.items():
        want = math.fsum(_w(g) * k.ms for g in gs for k in g.kernels if k.category == cat)
        assert ms == pytest.approx(want, rel=1e-12), cat
    assert weighed.step_summary().ms == pytest.approx(t.wall_ms, rel=1e-12)
    assert weighed.kernel_summary().ms == pytest.approx(t.kernel_ms, rel=1e-12)
    for cat, ms in t.categories.items():
        assert weighed.kernel_summary(cat).ms == pytest.approx(ms, rel=1e-12)
    # the counts stay counts: kernels and iterations are not multiplied
    assert t.kernel_count == len(units(gs))  # each row of the kernel tables, once


def test_the_views_add_up_to_the_weighed_kernel_time(weighed):
    t = weighed.totals()
    us = step_units(weighed, kernel_calls=True)
    assert math.fsum(u.ms for u in us) == pytest.approx(t.kernel_ms, rel=1e-12)
    for view in (by_line(us), by_module(us), by_module(us, 1)):
        assert math.fsum(grp.ms for grp in view) == pytest.approx(t.kernel_ms, rel=1e-12)
    one_call = {(u.graph.id, u.kernel.name, u.site_mark): u for u in units(weighed.measured(), kernel_calls=True)}
    for u in us:
        once = one_call[(u.graph.id, u.kernel.name, u.site_mark)]
        assert (u.ms, u.calls) == (pytest.approx(_w(u.graph) * once.ms), pytest.approx(_w(u.graph) * once.calls))


def test_the_report_weighs_the_step_and_keeps_each_graphs_own_tables_per_call(weighed):
    t = weighed.totals()
    text = render_breakdown(weighed)
    assert "Graphs (times per call; the all-graphs row: each graph times its calls)" in text
    step_row = next(ln for ln in text.splitlines() if ln.startswith("all graphs "))
    assert [fmt.ms(t.wall_ms), fmt.ms(t.kernel_ms), "4"] == [step_row.split()[i] for i in (5, 6, 4)]
    bwd_row = next(ln for ln in text.splitlines() if ln.startswith("0-backward "))
    assert bwd_row.split()[2] == "3"  # its calls column
    top = max(step_units(weighed), key=lambda u: u.ms)
    first = next(ln for ln in text.splitlines() if ln.lstrip().startswith("1  "))
    assert fmt.ms(top.ms) in first.split() and top.graph.id in first.split()
    assert "calls per step: 0-backward 3 (the all-graphs row, the time by category" in text
    # a graph's own section is one call of it
    g = weighed.graph("0-backward")
    assert f"Graph 0-backward: {fmt.ms(g.wall_ms)} ms wall" in render_breakdown(weighed, by="op")


def test_diff_json_html_and_compare_show_the_weighed_figures(weighed, capsys):
    t = weighed.totals()
    s = diff_results(weighed, weighed).sections[0]
    assert (s.step.base.ms, s.kernel_time.base.ms) == (pytest.approx(t.wall_ms), pytest.approx(t.kernel_ms))
    for cd in s.categories:
        assert cd.change.base.ms == pytest.approx(t.categories[cd.category])
    js = json.loads(weighed.to_json())
    assert js["totals"]["wall_ms"] == pytest.approx(t.wall_ms)
    assert js["totals"]["weights"] == {"0-forward": 1.0, "0-backward": BACKWARD_CALLS}
    assert BreakdownResult.from_dict(js).totals() == t
    html = render_breakdown(weighed, "html")
    assert fmt.ms(t.wall_ms) in html and fmt.ms(t.kernel_ms) in html
    ctext = render_compare(eager_and(weighed))
    for cat, ms in t.categories.items():
        share = fmt.pct(fmt.share(ms, t.kernel_ms))
        assert any(ln.startswith("% ") and ln.split()[-1] == share for ln in ctext.splitlines()), cat


def test_uncounted_calls_weigh_each_graph_once(weighed):
    """One graph not counted (a CUDA-graph replay bypasses the counted call): no weights at all."""
    weighed.graph("0-forward").calls = None
    t = weighed.totals()
    assert t.weights == {} and weighed.weights() == {"0-forward": 1.0, "0-backward": 1.0}
    assert t.wall_ms == pytest.approx(math.fsum(g.wall_ms for g in weighed.measured()), rel=1e-12)
    text = render_breakdown(weighed)
    assert "Graphs (each taken once: their calls were not counted)" in text and "calls per step" not in text


# ---- a script: a prefill graph once, a decode graph 12 times (synthetic, hand-built) -----------


def _graph(gid: str, calls: float | None, kernels: list[tuple[str, str, float]]) -> GraphResult:
    ks = [KernelStat(name=n, category=c, ms=ms, calls=1.0, samples_ms=[ms] * 4) for n, c, ms in kernels]
    wall = math.fsum(ms for _, _, ms in kernels) + 0.1
    return GraphResult(id=gid, role="inference", iterations=4, wall_ms=wall, wall_samples_ms=[wall] * 4,
                       busy_ms=wall - 0.1, busy_samples_ms=[wall - 0.1] * 4, kernel_ms=wall - 0.1,
                       categories={c: ms for _, c, ms in kernels}, kernels=ks, calls=calls)


def _script(decode_calls: float | None = 12.0) -> BreakdownResult:
    prefill = _graph("0-inference", None if decode_calls is None else 1.0,
                     [("extern_kernels.addmm", "extern_gemm", 1.5), ("cpp_fused_relu_0", "cpp_pointwise", 0.3)])
    decode = _graph("0.1-inference", decode_calls,
                    [("extern_kernels.addmm", "extern_gemm", 0.4), ("cpp_fused_relu_0", "cpp_pointwise", 0.05)])
    return BreakdownResult(model="decode", model_path="/x/decode.py", script=True, graphs=[prefill, decode])


def test_a_script_ranks_its_kernels_by_their_time_in_all_calls():
    """Once each, the prefill's GEMM (1.5 ms) leads; in the script the decode's (12 x 0.4 = 4.8
    ms) does, and the script's graph time is 1.9 + 12 x 0.55 = 8.5 ms."""
    r = _script()
    t = r.totals()
    assert t.wall_ms == pytest.approx(1.9 + 12 * 0.55)
    assert t.kernel_ms == pytest.approx(1.8 + 12 * 0.45)
    assert t.categories == pytest.approx({"extern_gemm": 1.5 + 12 * 0.4, "cpp_pointwise": 0.3 + 12 * 0.05})
    text = render_breakdown(r)
    assert "Top 4 of 4 kernels and extern ops (all graphs)" in text and "Time by category (all graphs)" in text
    first = next(ln for ln in text.splitlines() if ln.lstrip().startswith("1  ")).split()
    assert first[1] == "0.1-inference" and "12" in first and "4.800" in first
    assert f"{fmt.pct(100 * 4.8 / 8.5)}" in first  # max gain: of the script's time in its graphs
    script_row = next(ln for ln in text.splitlines() if ln.startswith("all graphs "))
    assert script_row.split()[4:7] == ["13", "8.500", "7.200"]
    assert "max gain = the kernel's share of the script's time in its compiled graphs" in text
    once = render_breakdown(_script(None))
    first = next(ln for ln in once.splitlines() if ln.lstrip().startswith("1  ")).split()
    assert first[1] == "0-inference" and "1.500" in first
    assert "Graphs (each taken once: their calls were not counted)" in once and "\nall graphs " in once


def test_the_step_split_subtracts_each_graph_times_its_calls():
    r = _script()
    r.script = False
    r.step_samples_ms = [10.0] * 6
    split = split_step(r)
    assert split.graphs_ms == pytest.approx(1.9 + 12 * 0.55)
    assert split.outside_ms == pytest.approx(10.0 - (1.9 + 12 * 0.55))
    # in turns: per round, the step block less each graph's block times its calls
    turns = StepTurns(graphs=["0-inference", "0.1-inference"],
                      blocks=[[[10.0]] * 5, [[1.0]] * 5, [[0.5]] * 5])
    s = split_in_turns(turns, {"0-inference": 1.0, "0.1-inference": 12.0})
    assert (s.step_ms, s.graphs_ms, s.outside_ms) == (10.0, pytest.approx(7.0), pytest.approx(3.0))


def test_a_run_interrupted_before_a_graph_was_profiled_has_no_outside_split():
    """Synthetic: the step was timed (10 ms) and its turns ran, but the run was stopped before
    its second graph was profiled: the step less the one graph it has would count the other as
    time outside the graphs. No split; the line says why; max gain takes the graphs alone."""
    r = _script()
    r.script = False
    r.step_samples_ms = [10.0] * 6
    r.status, r.errors = "interrupted", ["not profiled: 0-backward", "interrupted"]
    assert split_step(r) is None and gain_frame(r).outside_ms == 0.0
    assert ("outside the graphs: not measured: the run was interrupted before every graph was profiled"
            in render_breakdown(r))
    r.errors = ["interrupted"]  # stopped later (measuring its ceilings): every graph profiled
    assert split_step(r) is not None


def test_turns_whose_step_stalled_in_most_rounds_are_judged_by_the_faster_half():
    """Synthetic, after a loaded run: the step's block read 2.2 ms in 5 of 12 rounds and 10 ms
    (stalled) in 7, the graph's block 1.0 ms in all. The median round is a stall, so the median's
    own margin would keep every round (a 6.75 ms step, 5.75 ms outside the graph); the faster
    half's limit keeps the 5 at 2.2 ms: 1.2 ms outside."""
    step = [[2.2]] * 5 + [[10.0]] * 7
    turns = StepTurns(graphs=["0-forward"], blocks=[step, [[1.0]] * 12])
    s = split_in_turns(turns, {"0-forward": 1.0})
    assert (s.rounds, s.left_out) == (5, 7)
    assert (s.step_ms, s.outside_ms) == (pytest.approx(2.2), pytest.approx(1.2))


def _in_turns(step_ms: float, prefill_ms: float, decode_ms: float, before_ms: float | None = None):
    """Synthetic: ``_script``'s graphs as a model file's, its step timed at ``before_ms`` (else
    ``step_ms``) and in five rounds of turns at ``step_ms``, the prefill's blocks at
    ``prefill_ms`` and the decode's at ``decode_ms`` a call."""
    r = _script()
    r.script = False
    r.step_samples_ms = [step_ms if before_ms is None else before_ms] * 6
    r.step_turns = StepTurns(graphs=["0-inference", "0.1-inference"],
                             blocks=[[[step_ms]] * 5, [[prefill_ms]] * 5, [[decode_ms]] * 5])
    return r


def test_turns_at_another_speed_than_the_profile_give_max_gain_the_outside_at_the_profiles_speed():
    """Synthetic: the graphs' own calls in the turns took 22x their profiled 8.5 ms (the prefill
    41.8 ms, the decode 12.1 ms a call, 12 calls: 187 ms) of a 220 ms step: 33 ms outside them.
    At the profile's speed that is 33 / 22 = 1.5 ms, which max gain adds to the graphs' 8.5."""
    r = _in_turns(220.0, 41.8, 12.1)
    s = split_step(r)
    assert (s.graphs_ms, s.outside_ms) == (pytest.approx(187.0), pytest.approx(33.0))
    assert turns_slowdown(r, s) == pytest.approx(22.0)
    frame = gain_frame(r)
    assert (frame.graphs_ms, frame.outside_ms) == (pytest.approx(8.5), pytest.approx(1.5))
    text = render_breakdown(r)
    assert ("outside the graphs: 1.500 ms per step, at the profile's speed. WARNING: the graphs' own calls "
            "took 22.0x their profiled 8.500 ms in the step's turns (the machine busier while the step was "
            "timed): the turns' 33.000 ms outside the graphs (of a 220.000 ms step, 5 rounds) is set aside, "
            "and taken at the profile's speed (33.000 / 22.0).") in text
    assert "outside the graphs: 33.000" not in text  # the figure set aside never leads
    # at the profile's speed (within 1.5x either way) the turns' own figure stands
    r = _in_turns(12.0, 2.0, 0.6)
    s = split_step(r)
    assert turns_slowdown(r, s) is None and gain_frame(r).outside_ms == pytest.approx(12.0 - 2.0 - 12 * 0.6)


def test_turns_far_faster_than_a_disturbed_profile_print_their_ratio_not_zero():
    """Synthetic, after a breakdown beside other work: the profile ran 200x slow (two intra-op
    threads waiting on taken cores) while the step's turns ran quiet. The graphs' calls in the
    turns (0.02 + 12 x 0.005 = 0.08 ms) are 0.08 / 8.5 = 0.0094x their profiled 8.5 ms, and the
    line says so; it read "0.0x" and "(0.020 / 0.0)", a division by zero, before."""
    r = _in_turns(0.1, 0.02, 0.005)
    s = split_step(r)
    ratio = (0.02 + 12 * 0.005) / 8.5
    assert turns_slowdown(r, s) == pytest.approx(ratio)
    assert gain_frame(r).outside_ms == pytest.approx((0.1 - 0.08) / ratio)
    text = render_breakdown(r)
    assert ("the graphs' own calls took 0.0094x their profiled 8.500 ms in the step's turns (the machine "
            "quieter while the step was timed)") in text
    assert "and taken at the profile's speed (0.020 / 0.0094)." in text
    assert "0.0x" not in text and "/ 0.0)" not in text


def _turned(before_ms: float, step_ms: float, op: str):
    """Synthetic: ``_script``'s graphs as a model file's, its step timed at ``before_ms`` and in
    five rounds of turns at ``step_ms``, its graphs' blocks at 2.0 and 0.6 ms (9.2 ms a step);
    steps profiled after them hold ``op`` (4.0 ms) and 0.5 ms in no op."""
    r = _in_turns(step_ms, 2.0, 0.6, before_ms)
    r.outside = OutsideProfile(steps=3, kept=3, step_ms=20.0, graphs_ms=15.5, uncovered_ms=0.5,
                               ops=[OutsideOp(op, 62.0, 4.0)])
    return r


def test_a_step_slower_in_the_turns_than_just_before_them_gives_max_gain_the_profiled_outside():
    """Synthetic, after a loaded run of resnet18's training step: the same process timed the step
    at 44 ms, then in the turns at 105 ms (2.4x; 1.5x is the limit) while the graphs' own calls
    kept their profiled speed (2.0 + 12 x 0.6 = 9.2 ms against 8.5): 95.8 ms outside the graphs
    by the turns, where the steps profiled afterwards had 4.5 ms outside them (the ops' 4.0 and
    0.5 in no op). Max gain takes the profiled figure and says why; without profiled steps, none."""
    r = _turned(44.0, 105.0, "torch::autograd::AccumulateGrad")
    s = split_step(r)
    assert s.outside_ms == pytest.approx(105.0 - 9.2) and turns_slowdown(r, s) is None
    assert turns_step_off(r, s) == pytest.approx(105.0 / 44.0)
    frame = gain_frame(r)
    assert (frame.graphs_ms, frame.outside_ms) == (pytest.approx(8.5), pytest.approx(4.0 + 0.5))
    assert ("outside the graphs: 4.500 ms per step, the profiled steps' (the profiler's own cost included). "
            "WARNING: the step took 2.4x as long in its turns with the graphs as the 44.000 ms it took just "
            "before them in the same process (the machine busier while they ran): the turns' 95.800 ms "
            "outside the graphs (of a 105.000 ms step, 5 rounds) is set aside.") in render_breakdown(r)
    r.outside = None
    assert gain_frame(r).outside_ms == 0.0
    assert ("outside the graphs: not measured (no step was profiled), none counted in max gain. WARNING: "
            "the step took 2.4x") in render_breakdown(r)
    # 105 / 80 = 1.31x: within the limit; 105 / 300: the turns ran in a quieter stretch: their
    # figure stands
    for before in (80.0, 300.0):
        r.step_samples_ms = [before] * 6
        assert turns_step_off(r, split_step(r)) is None and gain_frame(r).outside_ms == pytest.approx(95.8)


def test_turns_far_more_outside_the_graphs_than_the_profiled_steps_give_max_gain_the_profiled():
    """Synthetic, after a loaded run of mlp's training step: the machine stayed slow through the
    step's timing, before the turns and in them (28 and 30 ms: no 1.5x between them), while the
    graphs' own blocks kept their profiled speed (9.2 ms against 8.5): 20.8 ms "outside the
    graphs" against the profiled steps' 4.5 ms (the profiler's own cost included), 4.6x. The
    line leads with the profiled figure, and max gain takes it; within 1.5x, or above it by
    less than a tenth of the step, the turns' figure stands."""
    r = _turned(28.0, 30.0, "aten::sum")
    s = split_step(r)
    assert s.outside_ms == pytest.approx(20.8) and turns_step_off(r, s) is None and turns_slowdown(r, s) is None
    assert turns_outside_off(r, s) == pytest.approx(20.8 / 4.5)
    assert gain_frame(r).outside_ms == pytest.approx(4.5)
    assert ("outside the graphs: 4.500 ms per step, the profiled steps' (the profiler's own cost included). "
            "WARNING: the turns' time outside the graphs was 4.6x the profiled steps'") in render_breakdown(r)
    r.step_turns.blocks[0], r.step_samples_ms = [[13.5]] * 5, [13.5] * 6  # 4.3 ms: within 1.5x
    assert turns_outside_off(r, split_step(r)) is None and gain_frame(r).outside_ms == pytest.approx(4.3)
    # 0.4 ms against the profiled 0.2: 2x, but by 0.2 ms, under a tenth of the 9.6 ms step
    r.step_turns.blocks[0], r.step_samples_ms = [[9.6]] * 5, [9.6] * 6
    r.outside = OutsideProfile(steps=3, kept=3, step_ms=20.0, graphs_ms=15.5, uncovered_ms=0.2, ops=[])
    assert turns_outside_off(r, split_step(r)) is None and gain_frame(r).outside_ms == pytest.approx(0.4)


def test_diff_says_when_calls_changed_and_withholds_a_verdict_when_one_side_was_not_counted():
    base, head = _script(12.0), _script(24.0)
    s = diff_results(base, head).sections[0]
    assert s.calls_changed == [("0.1-inference", 12.0, 24.0)]
    assert s.step.head.ms == pytest.approx(1.9 + 24 * 0.55)
    assert "calls changed: 0.1-inference 12 -> 24 (the step adds each graph's calls" in render_diff(
        diff_results(base, head))
    d = diff_results(_script(None), head)
    assert d.status() == "not comparable"
    # an older run: measuring it again with this version counts them, and the line says how
    assert [u.describe() for u in d.unmeasured] == [
        "default: the calls of each graph not measured in base (an older run: its step adds each graph "
        "once; measure base again with this version, `inductor-bench breakdown decode.py --device cpu` on "
        "base's code)"]
    replayed = _script(None)
    for g in replayed.graphs:
        g.cuda_graphs = True
    assert [u.describe() for u in diff_results(head, replayed).unmeasured] == [
        "default: the calls of each graph not measured in head (CUDA-graph replays, whose calls are not "
        "counted: its step adds each graph once)"]


def test_a_scaled_summary_is_w_calls_of_the_measured_one():
    s = summarize_steady([1.0, 1.2, 0.9, 1.1])
    w = s.scaled(3.0)
    assert (w.n, w.left_out) == (s.n, s.left_out)
    for a, b in ((w.ms, s.ms), (w.low, s.low), (w.high, s.high), (w.sigma, s.sigma), (w.min, s.min),
                 (w.max, s.max)):
        assert a == pytest.approx(3.0 * b)


def test_a_stall_in_one_graphs_block_leaves_its_round_out_of_the_split():
    """Synthetic rounds: a steady 2 ms step, graphs of 0.5 and 0.9 ms, and in round 6 the first
    graph's block alone stalled at 40 ms. Judged by the step alone that round stays and takes
    the mean outside time below zero; judged by each graph's block too, it is left out, and the
    split is the mean over the other eleven rounds, computed here."""
    jitter = [0.0, 0.01, -0.01, 0.02, 0.0, -0.02, 0.01, 0.0, 0.015, -0.005, 0.0, 0.005]
    step = [2.0 + j for j in jitter]
    first = [0.5 + j / 2 for j in jitter]
    first[6] = 40.0
    second = [0.9 - j / 3 for j in jitter]
    turns = StepTurns(graphs=["0-forward", "0-backward"],
                      blocks=[[[x] for x in step], [[x] for x in first], [[x] for x in second]])
    s = split_in_turns(turns, {"0-forward": 1.0, "0-backward": 1.0})
    kept = [i for i in range(12) if i != 6]
    assert (s.rounds, s.left_out) == (11, 1)
    assert s.step_ms == pytest.approx(math.fsum(step[i] for i in kept) / 11)
    assert s.outside_ms == pytest.approx(math.fsum(step[i] - first[i] - second[i] for i in kept) / 11)
    assert 0 < s.outside_ms < s.step_ms


def test_calls_are_counted_unless_torch_replayed_the_graph_from_a_cuda_graph(tmp_path):
    """A max-autotune script on the host: torch asked for CUDA graphs and skipped them (its
    state says why), so every call went through the counted call; only a graph that runs under
    CUDA graphs goes uncounted (before: a warm-cache max-autotune script lost its call counts)."""
    from inductor_bench.core.modparse import parse_module
    from inductor_bench.runner.graph_sources import GraphSource
    from inductor_bench.runner.pipeline import counted_calls

    def src(state):
        return GraphSource(GraphResult(id="0-inference", role="inference"), tmp_path / "m.py", parse_module(""),
                           {}, cudagraph_state=state, origin="/cache/kp/ckpjpu.py")

    counts = {"ckpjpu": 5}
    skipped = {"cudagraphs_requested": True, "disabled_cudagraphs_reason": "skipping cudagraphs due to cpu device"}
    assert counted_calls(counts, src(skipped)) == 5
    assert counted_calls(counts, src(None)) == 5 and counted_calls(counts, src({"cudagraphs_requested": False})) == 5
    assert counted_calls(counts, src({"cudagraphs_requested": True, "disabled_cudagraphs_reason": None})) is None
    assert counted_calls(None, src(None)) is None
    assert counted_calls({}, src(None)) == 0.0
