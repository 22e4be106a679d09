"""compare's timing worker (``runner/timer.py``): a column's first calls after another column's
run cold, and are not timed.

Synthetic columns whose times follow the effect measured in compares of ``models/mlp.py`` on
CPU (the first calls of a block took 1.2-2.5x, then 1.05-3x, the median of the rest): here a
column takes 2.0 and 1.5 ms in its first two calls after another column's call, 1.0 ms (eager)
or 0.8 ms (default) from the third on. Every timed call then reads the warm time, and every
round's ratio is 0.8 exactly; timed cold, a block of 10 read 1.15 ms and 0.95 ms (0.826).
"""

from __future__ import annotations

import pytest

from inductor_bench.runner import timer
from inductor_bench.runner.rounds import Pace, Plan

WARM_MS = [1.0, 0.8]
COLD_EXTRA_MS = [1.0, 0.5]  # a column's 1st and 2nd call after another column's


def columns() -> tuple[list, list[str]]:
    log: list[int] = []

    def column(i: int):
        def call() -> float:
            since = 0  # the column's calls since another column's
            for side in reversed(log):
                if side != i:
                    break
                since += 1
            cold = len(log) > since and since < len(COLD_EXTRA_MS)  # another column ran before
            log.append(i)
            return WARM_MS[i] + (COLD_EXTRA_MS[since] if cold else 0.0)

        return call

    return [column(0), column(1)], log


def paces(before_ms: list[float], block_s: float, max_steps: int) -> list[Pace]:
    """Each column's pace from its fastest call before the rounds (ms)."""
    return [Pace(block_s, max_steps, ms) for ms in before_ms]


def test_each_block_starts_with_untimed_calls_and_reads_the_warm_time():
    calls, log = columns()
    plan = Plan(budget_s=None, max_steps=100, min_steps=1)
    blocks = timer.timed_rounds(calls, paces([1.0, 0.8], block_s=0.01, max_steps=100), plan)
    assert [sum(len(b) for b in side) for side in blocks] == [100, 100]
    assert all(t == WARM_MS[i] for i, side in enumerate(blocks) for b in side for t in b), blocks
    ratios = [sum(h) / len(h) / (sum(b) / len(b)) for b, h in zip(*blocks, strict=True)]
    assert ratios == pytest.approx([WARM_MS[1] / WARM_MS[0]] * len(ratios), rel=1e-12)
    assert len(log) > 200  # the untimed calls ran: 2 a block where the column before was another


def test_a_column_whose_first_calls_stalled_starts_its_later_blocks_warm_too():
    """Eager's two calls before the rounds stalled (60 ms: 1 untimed call and a block of 1).
    Its first block runs first, after no other column's call; its call there (1.0 ms) sets 2
    untimed calls a block from then on, so every block reads the warm time and every round's
    ratio is 0.8 exactly. With the count set once from the stalled calls, every later eager
    block read 1.5 ms first (its 2nd call after default's; a block of 10: 1.05 ms, 0.762)."""
    calls, _ = columns()
    plan = Plan(budget_s=None, max_steps=100, min_steps=1)
    blocks = timer.timed_rounds(calls, paces([60.0, 0.8], block_s=0.01, max_steps=100), plan)
    eager, default = blocks
    assert all(t == WARM_MS[0] for b in eager for t in b), eager
    assert all(t == WARM_MS[1] for b in default for t in b), default
    later = [sum(h) / len(h) / (sum(b) / len(b)) for b, h in zip(eager, default, strict=True) if b and h]
    assert len(later) >= 5
    assert later == pytest.approx([WARM_MS[1] / WARM_MS[0]] * len(later), rel=1e-12)


def test_a_column_slower_in_the_rounds_than_before_keeps_the_block_size_its_untimed_calls_follow():
    """Eager took 1.0 ms in its two calls before the rounds and 4.0 ms in every call of the
    rounds (the machine got busy). Its fastest call stays 1.0 ms, for its block size and its
    untimed calls alike: blocks of 20 (50 ms of 1.0 ms calls, 25 at most, cut to a tenth of the
    200-call limit) each started by 2 untimed calls (2 ms of them), as default's. Sized by the
    rounds' calls alone while its untimed calls followed the calls before too, eager's later
    blocks were of 13 (ceil(50 / 4.0)), set by a figure its untimed calls did not use."""
    log: list[int] = []

    def column(i: int, ms: float):
        def call() -> float:
            log.append(i)
            return ms

        return call

    plan = Plan(budget_s=None, max_steps=200, min_steps=1)
    blocks = timer.timed_rounds([column(0, 4.0), column(1, 1.0)], paces([1.0, 1.0], 0.05, 200), plan)
    assert [[len(b) for b in side] for side in blocks] == [[20] * 10, [20] * 10]
    runs = [side for n, side in enumerate(log) if n == 0 or log[n - 1] != side]  # a column's calls in a row
    assert [log.count(i) for i in (0, 1)] == [200 + 2 * runs.count(0), 200 + 2 * runs.count(1)]
