"""Rounds of blocks: how several sides are timed in turns in one process.

In each round every side runs one block of calls, the order reversed every other round, so
that a process's drift falls on all sides alike. The timing worker of ``compare``
(``timer.py``) stops each side on its own budget (``Plan``); the compile worker's step and
graphs (``turns.py``) run a fixed number of rounds. Pure scheduling: the calls time
themselves and return ms.

A side's budget is charged its calls times their median time (``charged_s``), not their sum:
on a shared machine a call stalled by another process (100 ms and more against a 4 ms step)
would otherwise use up its side's budget in a round or two, and the side would sit out the
rounds the others still run for no reason of its own. Charging by the median still fails where
most of a side's first block stalled (its median is then a stall), so no side's budget ends it
before ``MIN_ROUNDS`` rounds, and no block is so large that the call limit would
(``fit_rounds``): every verdict rests on at least that many rounds of every side.
"""

from __future__ import annotations

import heapq
import math
import statistics
from collections.abc import Callable

from ..core.vocab import Stop

MAX_BLOCK_STEPS = 25
# Rounds a side runs before its time budget may end it: a paired verdict needs 5 rounds
# (stats.MIN_SAMPLES) and from 9 its 95% interval leaves out the most extreme ratio on each
# side (paired_rounds.median_ci_rank), so that one disturbed round sets neither bound. Seen on a loaded
# 2-core machine: eager's first block of 25 calls, 13 of them stalled at 176 ms, used up its 1 s
# budget, and every speedup of the compare rested on that one round.
MIN_ROUNDS = 10
CALL_LIMIT, TIME_BUDGET = Stop.CALL_LIMIT, Stop.TIME_BUDGET


def block_steps(per_call_s: float, block_s: float) -> int:
    """Calls per block: about ``block_s`` of them, 1 to MAX_BLOCK_STEPS."""
    if per_call_s <= 0:
        return MAX_BLOCK_STEPS
    return max(1, min(MAX_BLOCK_STEPS, math.ceil(block_s / per_call_s)))


class Pace:
    """A side's fastest call so far (ms), from the calls timed before the rounds on: the one
    figure that sets both how many calls its next block holds (``block_size``: ``block_steps``
    of it, cut by ``fit_rounds``) and, in the timing worker, how many untimed calls start that
    block (``timer.timed_rounds``), so that the two never rest on different calls. The size set
    before the rounds rests on two calls; where both stalled (176 ms against a 2 ms step, seen
    on a loaded machine) the side would run 1-call blocks to the end, a tenth of the samples of
    the others. The fastest call is the most blocks' worth any figure of the calls gives (their
    median, a stall where most stalled, gives fewer): a side all of whose calls stall runs
    1-call blocks because each call takes a block's time."""

    def __init__(self, block_s: float, max_steps: int, fastest_ms: float = math.inf) -> None:
        self.block_s, self.max_steps, self.fastest_ms = block_s, max_steps, fastest_ms

    def add(self, ms: float) -> None:
        self.fastest_ms = min(self.fastest_ms, ms)

    def per_call_s(self) -> float:
        return self.fastest_ms / 1e3

    def block_size(self) -> int:
        return fit_rounds([block_steps(self.per_call_s(), self.block_s)], self.max_steps)[0]


def fit_rounds(sizes: list[int], max_steps: int, min_rounds: int = MIN_ROUNDS) -> list[int]:
    """Calls per block, each cut so that ``max_steps`` calls make at least ``min_rounds``
    blocks (1 call at least)."""
    cap = max(1, max_steps // max(1, min_rounds))
    return [max(1, min(n, cap)) for n in sizes]


class Plan:
    """When to stop: every side has ``min_steps`` calls and has either run for ``budget_s``
    (its calls charged by ``charged_s``, and at least ``min_rounds`` rounds run) or reached
    ``max_steps``; with ``exact``, exactly ``max_steps`` each."""

    def __init__(self, budget_s: float | None, max_steps: int, min_steps: int, exact: bool = False,
                 min_rounds: int = 0) -> None:
        self.budget_s, self.max_steps, self.min_steps, self.exact = budget_s, max_steps, min_steps, exact
        self.min_rounds = min_rounds

    def stop_reason(self, steps: int, spent_s: float, rounds: int | None = None) -> str | None:
        """CALL_LIMIT or TIME_BUDGET where a side with ``steps`` calls in ``rounds`` blocks
        (None: enough), charged ``spent_s``, is done; None while it runs on."""
        if steps >= self.max_steps:
            return CALL_LIMIT
        if self.exact or steps < self.min_steps or (rounds is not None and rounds < self.min_rounds):
            return None
        return TIME_BUDGET if self.budget_s is not None and spent_s >= self.budget_s else None

    def side_done(self, steps: int, spent_s: float, rounds: int | None = None) -> bool:
        return self.stop_reason(steps, spent_s, rounds) is not None

    def left(self, steps: int) -> int:
        return max(0, self.max_steps - steps)


def charged_s(times_ms: list[float]) -> float:
    """What a side's calls (ms each) use of its budget, in seconds: their number times their
    median, so that a few calls stalled by other work cost no more than typical ones."""
    return len(times_ms) * statistics.median(times_ms) / 1e3 if times_ms else 0.0


class Tally:
    """A side's calls so far (ms), kept as they come: their number and their median in two
    heaps (the lower half, negated, and the upper), so that charging a side after each block
    costs a few steps a call, where sorting all its calls again grew with the square of
    ``--repeat``. ``charged_s`` equals ``charged_s`` of the calls, to the bit. (Its fastest
    call is its ``Pace``'s.)"""

    def __init__(self) -> None:
        self.low: list[float] = []  # the lower half, negated (a max-heap); one more when odd
        self.high: list[float] = []

    def add(self, ms: float) -> None:
        if not self.low or ms <= -self.low[0]:
            heapq.heappush(self.low, -ms)
        else:
            heapq.heappush(self.high, ms)
        if len(self.low) > len(self.high) + 1:
            heapq.heappush(self.high, -heapq.heappop(self.low))
        elif len(self.high) > len(self.low):
            heapq.heappush(self.low, -heapq.heappop(self.high))

    def median_ms(self) -> float:
        """``statistics.median`` of the calls: the middle one, or the mean of the middle two."""
        if len(self.low) > len(self.high):
            return -self.low[0]
        return (-self.low[0] + self.high[0]) / 2

    def charged_s(self) -> float:
        n = len(self.low) + len(self.high)
        return n * self.median_ms() / 1e3 if n else 0.0


def stop_reasons(blocks: list[list[list[float]]], plan: Plan) -> list[str | None]:
    """Why each side of ``interleave``'s blocks stopped: CALL_LIMIT, TIME_BUDGET, or None
    (the rounds ran out first)."""
    out = []
    for side in blocks:
        times = [t for blk in side for t in blk]
        out.append(plan.stop_reason(len(times), charged_s(times), sum(1 for blk in side if blk)))
    return out


def interleave(
    calls: list[Callable[[], float]], sizes: list[int], plan: Plan, max_rounds: int | None = None,
    paces: list[Pace] | None = None,
) -> list[list[list[float]]]:
    """Rounds of blocks, one block per side per round (``sizes[i]`` calls of ``calls[i]``,
    each returning its time in ms), forward and backward order alternating, until ``plan``
    says every side is done or ``max_rounds`` have run. Returns blocks[side][round]; a side
    that is done runs no more blocks, so later rounds pair only the sides still running. Each
    side's budget is charged by ``charged_s`` (kept by a ``Tally``). With ``paces``, every call
    of a side is added to its ``Pace``, its later blocks take the size that gives, and ``sizes``
    is updated in place."""
    blocks: list[list[list[float]]] = [[] for _ in calls]
    tallies = [Tally() for _ in calls]
    steps = [0] * len(calls)
    spent = [0.0] * len(calls)
    ran = [0] * len(calls)  # blocks each side ran
    r = 0
    while not all(plan.side_done(steps[i], spent[i], ran[i]) for i in range(len(calls))):
        if max_rounds is not None and r >= max_rounds:
            break
        order = range(len(calls)) if r % 2 == 0 else reversed(range(len(calls)))
        for i in order:
            if plan.side_done(steps[i], spent[i], ran[i]):
                blocks[i].append([])
                continue
            ran[i] += 1
            n = min(sizes[i], plan.left(steps[i]))
            blk = [calls[i]() for _ in range(n)]
            blocks[i].append(blk)
            steps[i] += n
            for ms in blk:
                tallies[i].add(ms)
                if paces is not None:
                    paces[i].add(ms)
            spent[i] = tallies[i].charged_s()
            if paces is not None and blk:
                sizes[i] = paces[i].block_size()
        r += 1
    return blocks
