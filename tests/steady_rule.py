"""The statistics policy's rule for profiled iterations, written out again from
docs/statistics.md, so that tests check the tool against it rather than against itself."""

from __future__ import annotations

import statistics


def limit(xs: list[float]) -> float:
    """median + max(3.5 x 1.4826 x MAD, 5% of the median)."""
    med = statistics.median(xs)
    mad = statistics.median([abs(x - med) for x in xs])
    return med + max(3.5 * 1.4826 * mad, 0.05 * med)


def kept_iterations(walls: list[float], kernels: list[list[float]], clock: list[float] | None = None,
                    rule=limit) -> list[int]:
    """Iterations kept: the wall within its limit, no part (a kernel's time, a call's time, the idle time)
    beyond its own limit by more than 5% of the median wall, and the worker's clock reading
    (where given) within its own limit (with fewer than 5 kept, the walls alone decide);
    ``rule`` gives the walls', the parts' and the clock's limits."""
    by_wall = [i for i, w in enumerate(walls) if w <= rule(walls)]
    floor = 0.05 * statistics.median(walls)
    bad = set(range(len(walls))) - set(by_wall)
    for xs in kernels:
        lim, med = rule(xs), statistics.median(xs)
        bad |= {i for i, x in enumerate(xs) if x > lim and x - med > floor}
    if clock:
        bad |= {i for i, c in enumerate(clock) if c > rule(clock)}
    kept = [i for i in range(len(walls)) if i not in bad]
    return kept if len(kept) >= 5 else by_wall


def limit_of_repeats(xs: list[float]) -> float:
    """The limit for the samples of one call repeated: ``limit``, unless the median lies more
    than two margins (of the faster half: its median and margin) above the faster half's
    median, five samples or more in that half: then the faster half's own limit."""
    fast = sorted(xs)[: (len(xs) + 1) // 2]
    if len(fast) >= 5 and statistics.median(xs) > 2 * limit(fast) - statistics.median(fast):
        return limit(fast)
    return limit(xs)


def kept_rounds(steps: list[float], graphs: list[list[float]]) -> list[int]:
    """The rounds of a step's turns kept: as ``kept_iterations``, the step a round's wall and
    each graph's block a part, each judged by ``limit_of_repeats``."""
    return kept_iterations(steps, graphs, rule=limit_of_repeats)


def kept_profiled(walls: list[float], kernels: list[list[float]], clock: list[float] | None = None) -> list[int]:
    """A graph's profiled iterations kept: ``kept_iterations``, every limit ``limit_of_repeats``
    (each iteration runs the same compiled graph on the same inputs: a stalled majority is no
    work of its own)."""
    return kept_iterations(walls, kernels, clock, rule=limit_of_repeats)
