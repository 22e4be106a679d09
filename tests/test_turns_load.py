"""The load from other processes while the step and its graphs ran in turns: read with the
rounds, kept in the result, and a warning on the line of the time outside the graphs where it
disturbed them.

Seen on a 2-layer GPT-2 training step (CPU, one thread) beside other users' compiles: its
turns' step read 8.6 ms in most rounds and 4.1-4.3 ms in the two quiet ones, its graphs
3.4 ms; the line said 3.380 ms outside the graphs (50% of the step) where the thread's own
CPU time put the step at 4.1-4.3 ms and the time outside at about 0.6 ms. None of the three
checks against the profile fired, as the profiled steps were as disturbed, and the line
carried no warning.
"""

from __future__ import annotations

import json

from inductor_bench.core.results import BreakdownResult, GraphResult, StepTurns
from inductor_bench.core.step import split_step
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.runner import turns
from inductor_bench.runner.pipeline import step_turns

BUSY = {"others_cores": 1.6, "steal_pct": 0.0, "cores": 2}
QUIET = {"others_cores": 0.1, "steal_pct": 0.0, "cores": 2}


def _result(load: dict | None) -> BreakdownResult:
    """A step of 4.0 ms and two graphs of 1.0 and 2.5 ms, in 5 rounds of turns alike: 0.5 ms
    outside them."""
    r = BreakdownResult(model="m", device="cpu", step_samples_ms=[4.0] * 6)
    for i, w in enumerate([1.0, 2.5]):
        r.graphs.append(GraphResult(id=f"0-g{i}", role="forward", device="cpu", wall_ms=w, iterations=1))
    r.step_turns = StepTurns(graphs=["0-g0", "0-g1"], blocks=[[[4.0]] * 5, [[1.0]] * 5, [[2.5]] * 5], load=load)
    return r


def test_turns_timed_beside_other_work_warn_on_the_outside_line():
    r = _result(BUSY)
    s = split_step(r)
    assert (s.rounds, s.step_ms, s.outside_ms) == (5, 4.0, 0.5)
    text = render_breakdown(r)
    line = next(ln for ln in text.splitlines() if ln.startswith("outside the graphs: 0.500 ms per step"))
    assert line.endswith("WARNING: the step and its graphs were timed in turns while other processes kept "
                         "1.6 of 2 cores busy: the time outside the graphs, a difference of two times, may "
                         "be far off.")
    back = BreakdownResult.from_dict(json.loads(r.to_json()))
    assert back.step_turns == r.step_turns and back.step_turns.load == BUSY


def test_quiet_turns_or_an_unread_load_add_nothing_and_save_no_load():
    for load in (QUIET, None):
        text = render_breakdown(_result(load))
        assert "timed in turns while" not in text
    assert "load" not in _result(None).step_turns.to_dict()
    assert "load" not in json.loads(_result(None).to_json())["extras"]["step_turns"]


def test_the_load_read_with_the_rounds_reaches_the_result(monkeypatch, tmp_path):
    path = tmp_path / "graph.py"
    path.write_text("")
    monkeypatch.setattr(turns, "load_module", lambda p: object())
    monkeypatch.setattr(turns, "harness", lambda mod, sizes: object())
    monkeypatch.setattr(turns, "_timed", lambda run, device: lambda: 0.5)
    raw = turns.time_in_turns(lambda: 1.0, [str(path)], "cpu", 0.5)
    assert set(raw) == {"paths", "blocks", "load"}
    assert raw["load"]["cores"] >= 1 and raw["load"]["others_cores"] >= 0.0
    t = step_turns(raw, {str(path): "0-forward"})
    assert t.graphs == ["0-forward"] and t.load == raw["load"]
