"""compare's "outside graphs, ms" row where the turns it comes from ran beside other work: the
cell is marked (!) and a warning names the load, as breakdown's outside line does for the same
turns (``tests/test_turns_load.py``); the JSON's summary names the column (hand-built results,
synthetic rounds).

Seen on this 2-core VM (torch 2.13 CPU, 2026-12-07), ``compare`` of ``models/mlp.py --train``
while other processes kept 1.6 of 2 cores busy: the timing worker's turns read the step, one call
a round, at 5.3-12 ms in 8 of 9 rounds and 2.37 ms in one, its graphs' blocks (several calls,
their stalls left out) at 0.8 and 1.3 ms; the row read 4.434 ms outside the graphs, with no
word, where the quiet round put it at 0.33 ms and the column's own breakdown at 1.735 ms.
"""

from __future__ import annotations

import json

from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.core.results import BreakdownResult, GraphResult, StepTurns
from inductor_bench.render.compare import render_compare

BUSY = {"others_cores": 1.6, "steal_pct": 0.0, "cores": 2}
QUIET = {"others_cores": 0.1, "steal_pct": 0.0, "cores": 2}


def _compare(load: dict | None) -> CompareResult:
    """One column: a step of 4.0 ms in every interleaved round, its two graphs 1.0 and 2.5 ms
    profiled and in the timing worker's 5 rounds of turns (a 4.0 ms step): 0.5 ms outside them."""
    b = BreakdownResult(model="m", device="cpu", step_samples_ms=[4.0] * 6)
    for i, w in enumerate([1.0, 2.5]):
        b.graphs.append(GraphResult(id=f"0-g{i}", role="forward", device="cpu", wall_ms=w, iterations=1))
    turns = StepTurns(graphs=["0-g0", "0-g1"], blocks=[[[4.0]] * 5, [[1.0]] * 5, [[2.5]] * 5], load=load)
    m = ModeResult(mode="default", step_samples_ms=[4.0] * 6, paired_ms=[[4.0] * 3] * 10, breakdown=b,
                   step_turns=turns)
    return CompareResult(model="m", device="cpu", modes=[m])


def _row(text: str) -> str:
    return next(ln for ln in text.splitlines() if ln.startswith("outside graphs, ms"))


def test_turns_timed_beside_other_work_mark_the_cell_and_warn():
    r = _compare(BUSY)
    assert r.modes[0].outside_ms() == 0.5  # the figure stands; it is said to be disturbed
    text = render_compare(r)
    assert _row(text).split()[-2:] == ["0.500", "(!)"]
    assert ("warning: default: outside graphs (!): its step and its graphs were timed in turns while other "
            "processes kept 1.6 of 2 cores busy: the 0.500 ms outside them, a difference of two times each "
            "slowed by its own stalls, may be far off") in text.splitlines()
    summary = json.loads(r.to_json())["summary"]
    assert summary["outside_ms"] == {"default": 0.5}
    assert summary["outside_disturbed"] == {"default": "other processes kept 1.6 of 2 cores busy"}
    md = render_compare(r, "markdown")
    assert "| 0.500 (!) |" in md.replace("  ", "") and "outside graphs (!): its step" in md


def test_quiet_or_unread_turns_leave_the_cell_as_it_was():
    for load in (QUIET, None):
        r = _compare(load)
        text = render_compare(r)
        assert _row(text).split()[-1] == "0.500" and "(!)" not in text
        assert json.loads(r.to_json())["summary"]["outside_disturbed"] == {}


def test_the_breakdowns_turns_count_where_the_timing_worker_made_none():
    r = _compare(None)
    m = r.modes[0]
    m.breakdown.step_turns, m.step_turns = m.step_turns, None
    m.breakdown.step_turns.load = BUSY
    assert _row(render_compare(r)).split()[-2:] == ["0.500", "(!)"]
