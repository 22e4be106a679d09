"""Interleaved rounds -> the median of their head / base ratios with its distribution-free interval.

When both sides were timed in one process, their calls interleaved in blocks, each round gives
one ratio of the blocks' figures, head / base (``round_ratios``). The change is the median of
the rounds' ratios (of an even number, the geometric mean of the middle two), its interval the
``PAIR_CONFIDENCE`` interval of that median (order statistics ``x_(k)``, ``x_(n-k+1)`` with
``k`` from ``median_ci_rank``). ``core/stats.py`` judges it (``judge_paired``).

Pure Python; no torch.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .steady import steady_mean

PAIR_CONFIDENCE = 0.95
# Binomial tails summed exactly up to this many samples; the normal approximation above.
EXACT_UP_TO = 1000


@lru_cache(maxsize=4096)
def median_ci_rank(n: int, confidence: float = PAIR_CONFIDENCE) -> int:
    """The rank k (1-based) of the interval [x_(k), x_(n-k+1)] that holds the median with at
    least ``confidence``; 1 (the whole range) when no narrower one does."""
    tail = (1.0 - confidence) / 2.0
    if n > EXACT_UP_TO:
        z = statistics.NormalDist().inv_cdf(1.0 - tail)
        return max(1, math.floor(n / 2.0 - z * math.sqrt(n) / 2.0))
    k, cdf, total = 0, 0.0, 1 << n  # int / int divides exactly for any n
    while k < n:  # cdf = P(B <= k - 1)
        p = math.comb(n, k) / total
        if cdf + p > tail:
            break
        cdf += p
        k += 1
    return max(1, k)


@dataclass(frozen=True)
class Paired:
    """Head / base from interleaved rounds: the median of the rounds' ratios and its
    PAIR_CONFIDENCE interval."""

    rounds: int
    ratio: float
    low: float
    high: float


def round_ratios(base_blocks: list[list[float]], head_blocks: list[list[float]]) -> list[float]:
    """One ratio per round both sides timed: the head block's figure over the base block's
    (each block's steady mean, ``core/steady.py``)."""
    out = []
    for b, h in zip(base_blocks, head_blocks, strict=False):
        if b and h:
            mb = steady_mean(b)
            if mb > 0:
                out.append(steady_mean(h) / mb)
    return out


def median_ratio(ratios: Sequence[float]) -> float:
    """The median of positive ratios on their logarithms (of an even number, the geometric mean
    of the middle two): the median of the reciprocals is then one over it."""
    return math.exp(statistics.median(math.log(r) for r in ratios))
