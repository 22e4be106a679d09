"""A compare of one column times it like several (the timing worker, for the step budget),
and a column timed only by its compile worker is said to be, with its count of calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.core.compare_summary import summary
from inductor_bench.core.results import BreakdownResult, GraphResult, StepTurns
from inductor_bench.render.compare import render_compare
from inductor_bench.runner.compare import _time_interleaved
from inductor_bench.runner.compare_timer import CompareRun


class StandInTimer(CompareRun):
    """Records the sides it is asked to time and answers with fixed blocks."""

    def time_sides(self, sides: list[dict[str, Any]], device: str, run_dir: Path, label: str) -> dict[str, Any]:
        self.asked = (sides, label)
        return {"blocks": [[[2.0] * 5] * 12], "block_steps": [5], "stopped": ["time budget"], "load": None}


def test_a_single_column_is_timed_by_the_timing_worker(tmp_path):
    run = StandInTimer(repeat=None, step_budget_s=1.0)
    m = ModeResult(mode="default", step_samples_ms=[3.0] * 7, run_dir=str(tmp_path))
    result = CompareResult(model="mlp", device="cpu", step_budget_s=1.0, modes=[m])
    _time_interleaved([(m, {"options": {}})], run, tmp_path, result)
    assert run.asked == ([{"options": {}}], "timing its steps (1 s)")
    assert m.paired_ms == [[2.0] * 5] * 12
    assert result.interleaved["rounds"] == 12
    assert result.interleaved["stopped"] == {"default": "time budget"}
    text = " ".join(render_compare(result).split())
    assert ("each column's steps were timed until 1 s of them or its call limit, whichever came first: "
            "default 60 calls (its time budget)") in text
    assert "compile worker" not in text


def test_a_column_without_the_timing_worker_says_how_it_was_timed():
    m = ModeResult(mode="default", step_samples_ms=[3.0] * 7)
    result = CompareResult(model="mlp", device="cpu", step_budget_s=1.0, modes=[m])
    text = " ".join(render_compare(result).split())
    assert "steps timed in each column's compile worker, not interleaved: default (7 calls)" in text
    assert "were timed until" not in text


def test_the_budget_note_says_which_limit_ended_each_column(tmp_path):
    """A column that reached its 200 calls before its 1 s is said to, not to have run 1 s."""
    m, e = (ModeResult(mode=x, step_samples_ms=[3.0] * 7, run_dir=str(tmp_path)) for x in ("default", "eager"))
    m.paired_ms, e.paired_ms = [[1.5] * 20] * 10, [[1.4] * 20] * 10
    result = CompareResult(model="mlp", device="cpu", step_budget_s=1.0, modes=[e, m])
    result.interleaved = {"rounds": 10, "stopped": {"eager": "call limit", "default": "call limit"}}
    text = " ".join(render_compare(result).split())
    assert "whichever came first: eager 200 calls (its call limit), default 200 calls (its call limit)" in text


def test_the_time_outside_the_graphs_is_the_turns_share_of_the_column_s_step():
    """Synthetic, after a loaded compare: the column's interleaved steps took 4.0 ms, the turns
    after them ran in a busier stretch, their step 8.0 ms and its graph's own calls 2.0 ms: 6.0
    ms outside the graph, above the step the table shows. The row shows its share, 75%, of the
    column's 4.0 ms step: 3.000."""
    b = BreakdownResult(model="mlp", device="cpu", step_samples_ms=[4.0] * 5,
                        graphs=[GraphResult(id="0-forward", role="forward", device="cpu", wall_ms=1.0,
                                            iterations=5)])
    m = ModeResult(mode="default", paired_ms=[[4.0] * 5] * 6, breakdown=b,
                   step_turns=StepTurns(graphs=["0-forward"], blocks=[[[8.0]] * 5, [[2.0]] * 5]))
    assert m.split().outside_ms == 6.0 and m.outside_ms() == 0.75 * 4.0
    result = CompareResult(model="mlp", device="cpu", step_budget_s=1.0, modes=[m])
    row = next(ln for ln in render_compare(result).splitlines() if ln.startswith("outside graphs, ms"))
    assert row.split()[-1] == "3.000"
    m.step_turns = StepTurns(graphs=["0-forward"], blocks=[[[1.5]] * 5, [[2.0]] * 5])  # graphs took longer
    assert m.split().outside_ms == -0.5 and m.outside_ms() is None
    row = next(ln for ln in render_compare(result).splitlines() if ln.startswith("outside graphs, ms"))
    assert row.split()[-1] == "n/m"


def test_a_stall_that_met_the_turns_step_alone_is_not_read_as_time_outside_the_graphs():
    """Synthetic, after a compare beside other compiles: the column's interleaved steps took 4.0
    ms and its graph 1.0 ms profiled; in the turns the graph's own calls kept their 1.0 ms while
    the step's blocks met stalls, 30.0 ms: 29/30 of a step "outside the graphs" (3.867 ms of
    the 4.0) where the graph alone takes a quarter of it. The step ran 7.5x its figure and the
    graph 1.0x: not measurable, in the table and in the JSON's summary."""
    b = BreakdownResult(model="mlp", device="cpu", step_samples_ms=[4.0] * 5,
                        graphs=[GraphResult(id="0-forward", role="forward", device="cpu", wall_ms=1.0,
                                            iterations=5)])
    m = ModeResult(mode="default", paired_ms=[[4.0] * 5] * 6, breakdown=b,
                   step_turns=StepTurns(graphs=["0-forward"], blocks=[[[30.0]] * 5, [[1.0]] * 5]))
    assert m.split().outside_ms == 29.0 and m.outside_ms() is None
    result = CompareResult(model="mlp", device="cpu", step_budget_s=1.0, modes=[m])
    row = next(ln for ln in render_compare(result).splitlines() if ln.startswith("outside graphs, ms"))
    assert row.split()[-1] == "n/m"
    assert summary(result)["outside_ms"] == {}
    m.step_turns = StepTurns(graphs=["0-forward"], blocks=[[[5.0]] * 5, [[1.25]] * 5])  # both 1.25x: it stands
    assert m.outside_ms() == 3.75 / 5.0 * 4.0 and summary(result)["outside_ms"] == {"default": 3.0}
    # the step at its own speed, the graph faster than its profile (the profiler's own cost on a
    # short graph): the share stands, 3.6 of 4.0 ms
    m.step_turns = StepTurns(graphs=["0-forward"], blocks=[[[4.0]] * 5, [[0.4]] * 5])
    assert m.outside_ms() == 3.6 / 4.0 * 4.0
