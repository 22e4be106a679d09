"""A round of turns whose graph's block stalled is left out of the time outside the graphs, however
few rounds remain: the turns run 5 rounds where the step is slow, and the profiled iterations'
fallback (fewer than 5 left: the walls alone decide) kept every such round, so one stalled graph
block took its stall off the time outside the graphs (or made it negative)."""

from __future__ import annotations

import pytest

from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.core.results import BreakdownResult, GraphResult, StepTurns
from inductor_bench.core.step import split_in_turns
from inductor_bench.render.compare import render_compare


def _column(step_blocks: list[float], graph_blocks: list[float], step_ms: float, profiled_ms: float) -> ModeResult:
    b = BreakdownResult(model="m", device="cpu", step_samples_ms=[step_ms] * 5,
                        graphs=[GraphResult(id="0-forward", role="forward", device="cpu", wall_ms=profiled_ms,
                                            iterations=5)])
    turns = StepTurns(graphs=["0-forward"], blocks=[[[x] for x in step_blocks], [[x] for x in graph_blocks]])
    return ModeResult(mode="default", paired_ms=[[step_ms] * 5] * 10, breakdown=b, step_turns=turns)


def _outside_row(m: ModeResult) -> str:
    text = render_compare(CompareResult(model="m", device="cpu", step_budget_s=1.0, modes=[m]))
    return next(ln for ln in text.splitlines() if ln.startswith("outside graphs, ms")).split()[-1]


def test_a_stalled_graph_block_leaves_its_round_out_of_five():
    """Synthetic: a 5.0 ms step, its graph 2.0 ms, one round's graph block stalled at 30.0 ms.
    The four other rounds: step (5.0 + 5.1 + 4.9 + 5.0) / 4 = 5.0 ms, outside (3.0 + 3.1 + 2.9 +
    3.0) / 4 = 3.0 ms. With the stalled round kept, the outside read (12.0 - 24.95) / 5 < 0: n/m."""
    t = StepTurns(graphs=["0-forward"], blocks=[[[5.0], [5.1], [4.9], [5.0], [5.05]],
                                                [[2.0], [2.0], [2.0], [2.0], [30.0]]])
    s = split_in_turns(t, {"0-forward": 1.0})
    assert (s.rounds, s.left_out) == (4, 1)
    assert s.step_ms == pytest.approx(5.0) and s.outside_ms == pytest.approx(3.0)
    m = _column([5.0, 5.1, 4.9, 5.0, 5.05], [2.0, 2.0, 2.0, 2.0, 30.0], step_ms=5.0, profiled_ms=2.0)
    assert m.outside_ms() == pytest.approx(3.0)
    assert _outside_row(m) == "3.000"


def test_a_stalled_graph_block_does_not_make_a_stalled_step_measurable():
    """After a compare of a 2-layer BERT's training step on a loaded 2-core machine (torch 2.13
    CPU, 2026-12-07; the graph's blocks made one): the column's step 85.59 ms, its graphs 4.126
    ms profiled; the turns' step blocks 104.8-255.9 ms while the graphs' blocks kept about 2 ms
    but in two rounds (64.6 and 14.2 ms). Kept, those put the graphs at 17.96 ms in the turns,
    4.4x their profile, as if the machine were as slow for them as for the step, and the row read
    90% of the step outside the graphs (76.9 ms). Without them the turns' step, (255.9 + 132.9 +
    204.2) / 3 = 197.67 ms, is 2.3x the column's while the graphs, 2.0 ms + 1.0 ms, ran at 0.73x
    their profile: a stall met the step's blocks alone, not measurable."""
    step, graph = [104.8, 255.9, 132.9, 188.7, 204.2], [65.6, 3.1, 2.8, 15.2, 3.1]  # the 1.0 ms graph added in
    s = split_in_turns(StepTurns(graphs=["0-forward"], blocks=[[[x] for x in step], [[x] for x in graph]]),
                       {"0-forward": 1.0})
    assert (s.rounds, s.left_out) == (3, 2)
    assert s.step_ms == pytest.approx(593.0 / 3) and s.graphs_ms == pytest.approx(3.0)
    m = _column(step, graph, step_ms=85.59, profiled_ms=4.126)
    assert m.outside_ms() is None
    assert _outside_row(m) == "n/m"
