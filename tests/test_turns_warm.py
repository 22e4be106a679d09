"""The step and the graphs timed in turns (``runner/turns.py``): a side's first calls after
another side's run cold, and are not timed.

The stand-ins below take their times from a model of that effect, as measured on a 2-layer
Hugging Face BERT (CPU, one thread): the step's first calls after a block of its graph's
harness took 0.82 and 0.63 ms, then 0.57 ms as in a loop of steps. Here the step takes
1.0 ms warm, 2.0 and 1.5 ms in its first two calls after a graph call; the graph 0.5 ms
always. Every timed call then reads the warm time, and the time outside the graphs
(step less graph) is 0.5 ms in every round.
"""

from __future__ import annotations

import pytest

from inductor_bench.runner import turns

STEP_MS, GRAPH_MS = 1.0, 0.5
COLD_EXTRA_MS = [1.0, 0.5]  # the step's 1st and 2nd call after a graph call


@pytest.fixture
def sides(monkeypatch, tmp_path):
    """(step, module path, log): a step and a graph whose times follow the model above."""
    log: list[str] = []

    def step() -> float:
        since = 0  # the step's calls since the last graph call
        for side in reversed(log):
            if side == "graph":
                break
            since += 1
        cold = "graph" in log and since < len(COLD_EXTRA_MS)
        log.append("step")
        return STEP_MS + (COLD_EXTRA_MS[since] if cold else 0.0)

    def graph() -> float:
        log.append("graph")
        return GRAPH_MS

    path = tmp_path / "graph.py"
    path.write_text("")
    monkeypatch.setattr(turns, "load_module", lambda p: object())
    monkeypatch.setattr(turns, "harness", lambda mod, sizes: object())
    monkeypatch.setattr(turns, "_timed", lambda run, device: graph)
    return step, str(path), log


def test_the_first_calls_after_another_side_are_not_timed(sides):
    step, path, log = sides
    out = turns.time_in_turns(step, [path], "cpu", 0.5)
    assert "error" not in out, out
    step_blocks, graph_blocks = out["blocks"]
    assert len(step_blocks) >= turns.MIN_ROUNDS
    # the graph follows the step in half of the rounds: without the untimed calls, those
    # blocks held 2.0 and 1.5 ms and the outside read 0.5 + 1.5 / 10 ms there
    assert all(t == STEP_MS for blk in step_blocks for t in blk), step_blocks
    assert all(t == GRAPH_MS for blk in graph_blocks for t in blk), graph_blocks
    outside = [sum(s) / len(s) - sum(g) / len(g) for s, g in zip(step_blocks, graph_blocks, strict=True)]
    assert outside == [STEP_MS - GRAPH_MS] * len(outside)
    assert "graph" in log[log.index("step", 3):]  # the rounds did alternate


def test_warm_calls_are_about_two_milliseconds_of_calls_and_at_least_one():
    assert turns.warm_calls(0.0006) == 3  # a BERT step: 4 would make 2 ms, at most 3
    assert turns.warm_calls(0.001) == 2
    assert turns.warm_calls(0.0015) == 2
    assert turns.warm_calls(0.017) == 1  # a resnet18 step
    assert turns.warm_calls(0.0) == turns.WARM_CALLS


def test_the_rounds_planned_count_the_untimed_calls():
    # a step of 1 ms (blocks of 10 and 2 untimed) and a graph of 0.5 ms (20 and 3):
    # 12 ms + 11.5 ms a round, 21 rounds in 0.5 s
    sizes, rounds = turns.plan_rounds([0.001, 0.0005], 0.5)
    assert sizes == [10, 20]
    assert rounds == int(0.5 / (12 * 0.001 + 23 * 0.0005))


def test_a_step_whose_first_calls_stalled_takes_blocks_and_untimed_calls_from_its_later_pace(sides, monkeypatch):
    """The step's three calls that set its pace stalled (20 ms): 1-call blocks of 10 ms, 1
    untimed call each; the graph's (0.5 ms) blocks of 20, 3 untimed calls. A round then takes
    (1 + 1) x 20 + (20 + 3) x 0.5 = 51.5 ms: 9 rounds of the 0.5 s budget. The step's first
    block (its 2nd call after the graph's estimate, 1.5 ms) makes its pace 1.5 ms: a block of
    ceil(10 / 1.5) = 7 started by ceil(2 / 1.5) = 2 untimed calls; its first warm call (1.0 ms)
    makes it blocks of 10, 2 untimed calls each. Every block after the first reads 1.0 ms, and
    the time outside the graph 0.5 ms. With the size and the untimed calls set once from the
    stalled calls, the step ran 9 blocks of 1 call, 1 untimed, and every block after a graph's
    read 1.5 ms (its 2nd call after it): 1.0 ms outside in those rounds."""
    step, path, log = sides
    stalled = [3]

    def first_stalled() -> float:
        ms = step()
        if stalled[0]:
            stalled[0] -= 1
            return 20.0
        return ms

    out = turns.time_in_turns(first_stalled, [path], "cpu", 0.5)
    step_blocks, graph_blocks = out["blocks"]
    assert [len(b) for b in step_blocks] == [1, 7] + [10] * 7
    assert [len(b) for b in graph_blocks] == [20] * 9
    assert step_blocks[0] == [1.5]
    assert all(t == STEP_MS for blk in step_blocks[1:] for t in blk), step_blocks
    outside = [sum(s) / len(s) - sum(g) / len(g) for s, g in zip(step_blocks, graph_blocks, strict=True)]
    assert outside[1:] == [STEP_MS - GRAPH_MS] * 8
