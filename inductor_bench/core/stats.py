"""Samples -> median, spread, a confidence interval, and whether two sample sets really differ.

The rule, in one sentence: a change is **significant** when both sides have at least
``MIN_SAMPLES`` samples, the confidence intervals of the two medians do not overlap, and the
difference of the medians exceeds a minimum relative change of the base median (the device's
floor for run-to-run drift, ``Backend.min_rel_change``). Otherwise it is **within noise**, or
**too few samples** when a side has fewer than ``MIN_SAMPLES``.

Each median's interval is distribution-free: the order statistics ``x_(k)`` and
``x_(n-k+1)`` with ``k`` the largest rank for which a Binomial(n, 1/2) leaves at most
``(1 - MEDIAN_CONFIDENCE) / 2`` in each tail (exact up to ``EXACT_UP_TO`` samples, the normal
approximation above). No shape is assumed (timings have long right tails), and the interval
narrows as samples accumulate: 30 samples with a 15% spread pin a median to about ±5%, 200
to about ±2%. Two intervals at 97.5% each hold both true medians with probability at least
95% (Bonferroni), so non-overlapping intervals mean a difference at that confidence; the ratio
of the medians (head / base) then lies within ``Change.ratio_ci``, which reports print.

**Paired** (``judge_paired``): when both sides were timed in one process, their calls
interleaved in blocks (round r: a block of base calls and a block of head calls, the order
alternating), each round gives one ratio of the blocks' medians, head / base. Drift of the
machine (another tenant, a clock, a process that settles at a speed of its own) moves both
blocks of a round alike and cancels in the ratio. The change is the median of the rounds'
ratios, its interval the distribution-free ``PAIR_CONFIDENCE`` interval of that median (the
order statistics above), and it is significant when the interval excludes 1 and the median
ratio is further than the minimum relative change from 1.

Pure Python; no torch.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from functools import lru_cache

from .vocab import Verdict

# Below five samples the median absolute deviation is mostly luck (with three samples it
# is the distance to one neighbour), so no spread can be trusted and nothing is called
# significant.
MIN_SAMPLES = 5

# Scales a MAD to a standard deviation for normally distributed samples (1 / Phi^-1(3/4)).
# The MAD is used instead of the standard deviation because timing samples have long
# tails (a GC pause, a page fault, a clock change) that would inflate a standard deviation.
MAD_TO_SIGMA = 1.4826

# Confidence of each median's interval; two of them make a 95% statement about the pair.
MEDIAN_CONFIDENCE = 0.975
PAIR_CONFIDENCE = 0.95
# Binomial tails summed exactly up to this many samples; the normal approximation above.
EXACT_UP_TO = 1000

# Changes smaller than this are not called significant however tight the samples are:
# two runs of the same model on the same machine differ by a few percent from clocks,
# heat and scheduling that no single run can see. Each backend sets its own floor
# (``Backend.min_rel_change`` in core/devices.py, with the measurements behind it); this one
# is the default of the functions below.
MIN_REL_CHANGE = 0.05

SIGNIFICANT = Verdict.SIGNIFICANT
WITHIN_NOISE = Verdict.WITHIN_NOISE
TOO_FEW = Verdict.TOO_FEW


@dataclass(frozen=True)
class Summary:
    """Median and robust spread of one sample set (times in ms)."""

    n: int
    median: float
    mad: float  # median absolute deviation from the median
    min: float
    max: float
    ci_low: float = 0.0  # MEDIAN_CONFIDENCE interval of the median (min..max below 10 samples)
    ci_high: float = 0.0

    @property
    def sigma(self) -> float:
        """Robust standard deviation: MAD scaled to a normal sigma."""
        return MAD_TO_SIGMA * self.mad

    @property
    def spread_pct(self) -> float | None:
        """Robust sigma as a percentage of the median (None when the median is 0)."""
        return 100.0 * self.sigma / self.median if self.median > 0 else None

    def to_dict(self) -> dict[str, float | int | None]:
        return {
            "n": self.n,
            "median": self.median,
            "mad": self.mad,
            "min": self.min,
            "max": self.max,
            "spread_pct": self.spread_pct,
            "ci": [self.ci_low, self.ci_high],
        }


def summarize(samples: list[float], fallback: float | None = None) -> Summary:
    """Summarize samples; with none, the median is ``fallback`` (e.g. a recorded mean)."""
    if not samples:
        value = fallback if fallback is not None else 0.0
        return Summary(n=0, median=value, mad=0.0, min=value, max=value, ci_low=value, ci_high=value)
    xs = sorted(samples)
    med = statistics.median(xs)
    mad = statistics.median(abs(x - med) for x in xs)
    k = median_ci_rank(len(xs))
    return Summary(
        n=len(xs), median=med, mad=mad, min=xs[0], max=xs[-1], ci_low=xs[k - 1], ci_high=xs[len(xs) - k]
    )


@lru_cache(maxsize=4096)
def median_ci_rank(n: int, confidence: float = MEDIAN_CONFIDENCE) -> int:
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
class Change:
    """Base -> head for one measured quantity."""

    base: Summary
    head: Summary
    min_change_ms: float  # min_rel x base median
    verdict: str  # SIGNIFICANT | WITHIN_NOISE | TOO_FEW
    paired: Paired | None = None  # set when the sides were timed interleaved (judge_paired)

    @property
    def ratio_ci(self) -> tuple[float, float] | None:
        """PAIR_CONFIDENCE interval of head / base (the time ratio; below 1 is faster): the
        paired ratios' interval, else from the two medians' intervals; None when the base
        interval reaches 0."""
        if self.paired is not None:
            return self.paired.low, self.paired.high
        if self.base.ci_low <= 0:
            return None
        return self.head.ci_low / self.base.ci_high, self.head.ci_high / self.base.ci_low

    @property
    def speedup_ci(self) -> tuple[float, float] | None:
        """The same interval for base / head (above 1 is faster)."""
        r = self.ratio_ci
        if r is None or r[0] <= 0:
            return None
        return 1.0 / r[1], 1.0 / r[0]

    @property
    def overlap(self) -> bool:
        """The two medians' intervals overlap: no difference at PAIR_CONFIDENCE."""
        return _overlap(self.base, self.head)

    @property
    def delta_ms(self) -> float:
        return self.head.median - self.base.median

    @property
    def rel_pct(self) -> float | None:
        """Change in % of the base: the median paired ratio's, else the medians' (None when
        the base is 0)."""
        if self.paired is not None:
            return 100.0 * (self.paired.ratio - 1.0)
        if self.base.median > 0:
            return 100.0 * self.delta_ms / self.base.median
        return None

    @property
    def significant(self) -> bool:
        return self.verdict == SIGNIFICANT

    @property
    def _up(self) -> float:
        return self.paired.ratio - 1.0 if self.paired is not None else self.delta_ms

    @property
    def slower(self) -> bool:
        """A significant increase of time (a regression)."""
        return self.significant and self._up > 0

    @property
    def faster(self) -> bool:
        return self.significant and self._up < 0

    @property
    def speedup(self) -> float | None:
        """base / head (> 1 means head is faster): 1 / the median paired ratio, else the
        medians' ratio."""
        if self.paired is not None:
            return 1.0 / self.paired.ratio if self.paired.ratio > 0 else None
        if self.head.median > 0:
            return self.base.median / self.head.median
        return None

    def to_dict(self) -> dict[str, object]:
        d: dict[str, object] = {
            "base": self.base.to_dict(),
            "head": self.head.to_dict(),
            "delta_ms": self.delta_ms,
            "rel_pct": self.rel_pct,
            "ratio_ci": list(self.ratio_ci) if self.ratio_ci else None,
            "min_change_ms": self.min_change_ms,
            "verdict": self.verdict,
        }
        if self.paired is not None:
            d["paired"] = {"rounds": self.paired.rounds, "ratio": self.paired.ratio}
        return d


@dataclass(frozen=True)
class Paired:
    """Head / base from interleaved rounds: the median of the rounds' ratios and its
    PAIR_CONFIDENCE interval."""

    rounds: int
    ratio: float
    low: float
    high: float


def round_ratios(base_blocks: list[list[float]], head_blocks: list[list[float]]) -> list[float]:
    """One ratio per round both sides timed: median(head block) / median(base block)."""
    out = []
    for b, h in zip(base_blocks, head_blocks, strict=False):
        if b and h:
            mb = statistics.median(b)
            if mb > 0:
                out.append(statistics.median(h) / mb)
    return out


def judge_paired(
    base_blocks: list[list[float]], head_blocks: list[list[float]], min_rel: float = MIN_REL_CHANGE
) -> Change:
    """The paired rule of this module (see its docstring) on two sides' blocks, round by round."""
    ratios = sorted(round_ratios(base_blocks, head_blocks))
    base = summarize([x for blk in base_blocks for x in blk])
    head = summarize([x for blk in head_blocks for x in blk])
    min_change = min_rel * base.median
    if len(ratios) < MIN_SAMPLES:
        return Change(base=base, head=head, min_change_ms=min_change, verdict=TOO_FEW)
    n = len(ratios)
    k = median_ci_rank(n, PAIR_CONFIDENCE)
    paired = Paired(rounds=n, ratio=statistics.median(ratios), low=ratios[k - 1], high=ratios[n - k])
    apart = paired.low > 1.0 or paired.high < 1.0
    verdict = SIGNIFICANT if apart and abs(paired.ratio - 1.0) > min_rel else WITHIN_NOISE
    return Change(base=base, head=head, min_change_ms=min_change, verdict=verdict, paired=paired)


def judge(base: Summary, head: Summary, min_rel: float = MIN_REL_CHANGE) -> Change:
    """Apply the significance rule of this module to two summaries."""
    min_change = min_rel * base.median
    if base.n < MIN_SAMPLES or head.n < MIN_SAMPLES:
        verdict = TOO_FEW
    elif not _overlap(base, head) and abs(head.median - base.median) > min_change:
        verdict = SIGNIFICANT
    else:
        verdict = WITHIN_NOISE
    return Change(base=base, head=head, min_change_ms=min_change, verdict=verdict)


def _overlap(base: Summary, head: Summary) -> bool:
    return not (head.ci_low > base.ci_high or head.ci_high < base.ci_low)


def compare_samples(
    base: list[float],
    head: list[float],
    *,
    min_rel: float = MIN_REL_CHANGE,
    base_fallback: float | None = None,
    head_fallback: float | None = None,
) -> Change:
    """Judge two sample lists (ms). Fallbacks stand in for the medians of empty lists."""
    return judge(summarize(base, base_fallback), summarize(head, head_fallback), min_rel)


def sum_samples(lists: list[list[float]]) -> list[float]:
    """Element-wise sum of per-iteration sample lists, cut to the shortest.

    Returns ``[]`` when the list is empty or any list has no samples: a sum with a
    missing part would look faster than it is.
    """
    if not lists or any(not s for s in lists):
        return []
    n = min(len(s) for s in lists)
    return [math.fsum(s[i] for s in lists) for i in range(n)]
