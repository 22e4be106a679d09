"""The statistics policy's rule for profiled iterations, written out again from
docs/statistics.md, so that tests check the tool against it rather than against itself."""

from __future__ import annotations

import statistics


def limit(xs: list[float]) -> float:
    """median + max(3.5 x 1.4826 x MAD, 5% of the median)."""
    med = statistics.median(xs)
    mad = statistics.median([abs(x - med) for x in xs])
    return med + max(3.5 * 1.4826 * mad, 0.05 * med)


def kept_iterations(walls: list[float], kernels: list[list[float]], clock: list[float] | None = None) -> list[int]:
    """Iterations kept: the wall within its limit, no part (a kernel's time, the idle time)
    beyond its own limit by more than 2% of the median wall, and the worker's clock reading
    (where given) within its own limit (with fewer than 5 kept, the walls alone decide)."""
    by_wall = [i for i, w in enumerate(walls) if w <= limit(walls)]
    floor = 0.02 * statistics.median(walls)
    bad = set(range(len(walls))) - set(by_wall)
    for xs in kernels:
        lim, med = limit(xs), statistics.median(xs)
        bad |= {i for i, x in enumerate(xs) if x > lim and x - med > floor}
    if clock:
        bad |= {i for i, c in enumerate(clock) if c > limit(clock)}
    kept = [i for i in range(len(walls)) if i not in bad]
    return kept if len(kept) >= 5 else by_wall
