"""Rounds of blocks: how several sides are timed in turns in one process.

In each round every side runs one block of calls, the order reversed every other round, so
that a process's drift falls on all sides alike. The timing worker of ``compare``
(``timer.py``) stops each side on its own budget (``Plan``); the compile worker's step and
graphs (``turns.py``) run a fixed number of rounds. Pure scheduling: the calls time
themselves and return ms.
"""

from __future__ import annotations

import math
from collections.abc import Callable

MAX_BLOCK_STEPS = 25


def block_steps(per_call_s: float, block_s: float) -> int:
    """Calls per block: about ``block_s`` of them, 1 to MAX_BLOCK_STEPS."""
    if per_call_s <= 0:
        return MAX_BLOCK_STEPS
    return max(1, min(MAX_BLOCK_STEPS, math.ceil(block_s / per_call_s)))


class Plan:
    """When to stop: every side has ``min_steps`` calls and has either run for ``budget_s``
    (the sum of its own calls) or reached ``max_steps``; with ``exact``, exactly
    ``max_steps`` each."""

    def __init__(self, budget_s: float | None, max_steps: int, min_steps: int, exact: bool = False) -> None:
        self.budget_s, self.max_steps, self.min_steps, self.exact = budget_s, max_steps, min_steps, exact

    def side_done(self, steps: int, spent_s: float) -> bool:
        if steps >= self.max_steps:
            return True
        if self.exact or steps < self.min_steps:
            return False
        return self.budget_s is not None and spent_s >= self.budget_s

    def left(self, steps: int) -> int:
        return max(0, self.max_steps - steps)


def interleave(
    calls: list[Callable[[], float]], sizes: list[int], plan: Plan, max_rounds: int | None = None
) -> list[list[list[float]]]:
    """Rounds of blocks, one block per side per round (``sizes[i]`` calls of ``calls[i]``,
    each returning its time in ms), forward and backward order alternating, until ``plan``
    says every side is done or ``max_rounds`` have run. Returns blocks[side][round]; a side
    that is done runs no more blocks, so later rounds pair only the sides still running."""
    blocks: list[list[list[float]]] = [[] for _ in calls]
    steps = [0] * len(calls)
    spent = [0.0] * len(calls)
    r = 0
    while not all(plan.side_done(steps[i], spent[i]) for i in range(len(calls))):
        if max_rounds is not None and r >= max_rounds:
            break
        order = range(len(calls)) if r % 2 == 0 else reversed(range(len(calls)))
        for i in order:
            if plan.side_done(steps[i], spent[i]):
                blocks[i].append([])
                continue
            n = min(sizes[i], plan.left(steps[i]))
            blk = [calls[i]() for _ in range(n)]
            blocks[i].append(blk)
            steps[i] += n
            spent[i] += sum(blk) / 1e3
        r += 1
    return blocks
