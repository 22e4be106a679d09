"""Samples -> the policy's figure with its interval, and whether two sample sets really differ.

Every time is summarised by the one policy of ``core/steady.py``: the mean over the steady
samples (the disturbed ones, far slower than the median, left out and counted). Its interval
is the Student-t interval of that mean at ``MEAN_CONFIDENCE`` over the steady samples, whose
tails the rule has cut (a mean's interval is only as good as its tails).

The rule, in one sentence: a change is **significant** when both sides have at least
``MIN_SAMPLES`` steady samples, the intervals of the two figures do not overlap, and the
ratio head / base lies beyond a minimum relative change (the device's floor for run-to-run
drift, ``Backend.min_rel_change``): above ``1 + min_rel`` or below ``1 / (1 + min_rel)``, so
that the verdict does not depend on which side is the base (1.11x faster one way is 0.90x the
other). Otherwise it is **within noise**, or **too few samples**
when a side has fewer than ``MIN_SAMPLES``. Two intervals at 97.5% each hold both true values
with probability at least 95% (Bonferroni), so non-overlapping intervals mean a difference at
that confidence; the ratio head / base then lies within ``Change.ratio_ci``, which reports print.

A sum of independently measured parts (the graphs of a step, a category over graphs) is
``add``: the figures add up exactly, the intervals' half-widths in quadrature.

**Paired** (``judge_paired``): when both sides were timed in one process, their calls interleaved in
blocks (round r: a block of base calls and a block of head calls, the order alternating), each round
gives one ratio of the blocks' figures, head / base. Drift of the machine (another tenant, a clock, a
process that settles at a speed of its own) moves both blocks of a round alike and cancels in the ratio.
The change is the median of the rounds' ratios (of an even number, the geometric mean of the middle
two), its interval the distribution-free ``PAIR_CONFIDENCE`` interval of that median (order statistics
``x_(k)``, ``x_(n-k+1)`` with ``k`` the largest rank for which a Binomial(n, 1/2) leaves at most the
tail outside), and it is significant when the interval excludes 1 and the median ratio lies beyond the
minimum relative change, the same symmetric test. A ratio is a verdict, not a time: no round is left out
of it.

Pure Python; no torch.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .steady import MAD_TO_SIGMA as MAD_TO_SIGMA  # re-exported: reports quote it
from .steady import mean, spread_sigma, steady, steady_mean
from .vocab import Verdict

# Below five samples the spread is mostly luck (with three samples it is the distance to one
# neighbour), so no interval can be trusted and nothing is called significant.
MIN_SAMPLES = 5

# Confidence of each figure's interval; two of them make a 95% statement about the pair.
MEAN_CONFIDENCE = 0.975
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
    """The policy's figure of one sample set (times in ms) with its interval."""

    n: int  # steady samples (those the figure is the mean of)
    ms: float  # the figure: the mean over the steady samples
    low: float  # MEAN_CONFIDENCE interval of the figure
    high: float
    sigma: float = 0.0  # spread of the steady samples (steady.spread_sigma)
    min: float = 0.0
    max: float = 0.0
    left_out: int = 0  # disturbed samples left out by the rule

    @property
    def spread_pct(self) -> float | None:
        """Robust sigma as a percentage of the figure (None when the figure is 0)."""
        return 100.0 * self.sigma / self.ms if self.ms > 0 else None

    @property
    def half_width(self) -> float:
        return max(self.ms - self.low, self.high - self.ms)

    def scaled(self, w: float) -> Summary:
        """The figure of ``w`` calls of what this one measured once (a graph a step calls
        twice): every time multiplied by ``w``; the samples and those left out the same."""
        return Summary(n=self.n, ms=w * self.ms, low=w * self.low, high=w * self.high,
                       sigma=w * self.sigma, min=w * self.min, max=w * self.max, left_out=self.left_out)

    def to_dict(self) -> dict[str, float | int | None]:
        return {
            "n": self.n,
            "ms": self.ms,
            "ci": [self.low, self.high],
            "sigma": self.sigma,
            "spread_pct": self.spread_pct,
            "min": self.min,
            "max": self.max,
            "left_out": self.left_out,
        }


def summarize(samples: Sequence[float], fallback: float | None = None) -> Summary:
    """Apply the policy to raw samples: the steady ones summarised, the disturbed counted.
    With no samples the figure is ``fallback`` (e.g. a figure saved without its samples)."""
    st = steady(samples)
    return summarize_steady(st.pick(samples), left_out=len(st.left_out), fallback=fallback)


def summarize_steady(samples: Sequence[float], left_out: int = 0, fallback: float | None = None) -> Summary:
    """Summarise samples the policy already kept (a kernel's time in its graph's steady
    iterations): no sample is left out again, so the figure is the one the report shows."""
    if not samples:
        v = fallback if fallback is not None else 0.0
        return Summary(n=0, ms=v, low=v, high=v, min=v, max=v, left_out=left_out)
    xs = list(samples)
    m = mean(xs)
    h = _half_width(xs, m)
    return Summary(
        n=len(xs), ms=m, low=m - h, high=m + h, sigma=spread_sigma(xs), min=min(xs), max=max(xs),
        left_out=left_out,
    )


def _half_width(xs: list[float], m: float) -> float:
    """Student-t half-width of the mean at MEAN_CONFIDENCE; the whole range below 2 samples."""
    n = len(xs)
    if n < 2:
        return 0.0
    sd = math.sqrt(math.fsum((x - m) ** 2 for x in xs) / (n - 1))
    return t_quantile(1.0 - (1.0 - MEAN_CONFIDENCE) / 2.0, n - 1) * sd / math.sqrt(n)


def t_quantile(p: float, df: int) -> float:
    """Student-t quantile by the Cornish-Fisher expansion around the normal one (within 0.5%
    of the exact value from 4 degrees of freedom, 3% at 1)."""
    z = statistics.NormalDist().inv_cdf(p)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    d = float(max(df, 1))
    return z + g1 / d + g2 / d**2 + g3 / d**3 + g4 / d**4


def add(parts: Sequence[Summary]) -> Summary:
    """The sum of independently measured parts: figures added exactly, half-widths in
    quadrature; as many samples as the part with fewest (for the MIN_SAMPLES rule)."""
    if not parts:
        return summarize_steady([])
    ms = math.fsum(p.ms for p in parts)
    h = math.sqrt(math.fsum(p.half_width**2 for p in parts))
    return Summary(
        n=min(p.n for p in parts),
        ms=ms,
        low=ms - h,
        high=ms + h,
        sigma=math.sqrt(math.fsum(p.sigma**2 for p in parts)),
        min=math.fsum(p.min for p in parts),
        max=math.fsum(p.max for p in parts),
        left_out=sum(p.left_out for p in parts),
    )


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
class Change:
    """Base -> head for one measured quantity."""

    base: Summary
    head: Summary
    min_change_ms: float  # min_rel x the base figure
    verdict: str  # SIGNIFICANT | WITHIN_NOISE | TOO_FEW
    paired: Paired | None = None  # set when the sides were timed interleaved (judge_paired)

    @property
    def min_rel(self) -> float | None:
        """The minimum relative change the verdict was judged by (None where the base is 0)."""
        return self.min_change_ms / self.base.ms if self.base.ms > 0 else None

    @property
    def ratio_ci(self) -> tuple[float, float] | None:
        """PAIR_CONFIDENCE interval of head / base (the time ratio; below 1 is faster): the
        paired ratios' interval, else from the two figures' intervals; None when the base
        interval reaches 0."""
        if self.paired is not None:
            return self.paired.low, self.paired.high
        if self.base.low <= 0:
            return None
        return max(self.head.low, 0.0) / self.base.high, self.head.high / self.base.low

    @property
    def speedup_ci(self) -> tuple[float, float] | None:
        """The same interval for base / head (above 1 is faster)."""
        r = self.ratio_ci
        if r is None or r[0] <= 0:
            return None
        return 1.0 / r[1], 1.0 / r[0]

    @property
    def overlap(self) -> bool:
        """The two figures' intervals overlap: no difference at PAIR_CONFIDENCE."""
        return _overlap(self.base, self.head)

    @property
    def delta_ms(self) -> float:
        return self.head.ms - self.base.ms

    @property
    def rel_pct(self) -> float | None:
        """Change in % of the base: the median paired ratio's, else the figures' (None when
        the base is 0)."""
        if self.paired is not None:
            return 100.0 * (self.paired.ratio - 1.0)
        if self.base.ms > 0:
            return 100.0 * self.delta_ms / self.base.ms
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
        figures' ratio."""
        if self.paired is not None:
            return 1.0 / self.paired.ratio if self.paired.ratio > 0 else None
        if self.head.ms > 0:
            return self.base.ms / self.head.ms
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


def judge_paired(
    base_blocks: list[list[float]], head_blocks: list[list[float]], min_rel: float = MIN_REL_CHANGE
) -> Change:
    """The paired rule of this module (see its docstring) on two sides' blocks, round by round."""
    ratios = sorted(round_ratios(base_blocks, head_blocks))
    base = summarize([x for blk in base_blocks for x in blk])
    head = summarize([x for blk in head_blocks for x in blk])
    min_change = min_rel * base.ms
    if len(ratios) < MIN_SAMPLES:
        return Change(base=base, head=head, min_change_ms=min_change, verdict=TOO_FEW)
    n = len(ratios)
    k = median_ci_rank(n, PAIR_CONFIDENCE)
    paired = Paired(rounds=n, ratio=median_ratio(ratios), low=ratios[k - 1], high=ratios[n - k])
    apart = paired.low > 1.0 or paired.high < 1.0
    verdict = SIGNIFICANT if apart and beyond(paired.ratio, min_rel) else WITHIN_NOISE
    return Change(base=base, head=head, min_change_ms=min_change, verdict=verdict, paired=paired)


def judge(base: Summary, head: Summary, min_rel: float = MIN_REL_CHANGE) -> Change:
    """Apply the significance rule of this module to two summaries."""
    min_change = min_rel * base.ms
    if base.n < MIN_SAMPLES or head.n < MIN_SAMPLES:
        verdict = TOO_FEW
    elif not _overlap(base, head) and _apart_by(base.ms, head.ms, min_rel):
        verdict = SIGNIFICANT
    else:
        verdict = WITHIN_NOISE
    return Change(base=base, head=head, min_change_ms=min_change, verdict=verdict)


def beyond(ratio: float, min_rel: float) -> bool:
    """Whether the ratio head / base is further from 1 than ``min_rel``, judged alike in both
    directions: above ``1 + min_rel`` or below ``1 / (1 + min_rel)``."""
    return ratio > 1.0 + min_rel or ratio * (1.0 + min_rel) < 1.0


def _apart_by(base_ms: float, head_ms: float, min_rel: float) -> bool:
    if base_ms <= 0.0 or head_ms <= 0.0:  # no ratio: the difference against the base's share
        return abs(head_ms - base_ms) > min_rel * base_ms
    return beyond(head_ms / base_ms, min_rel)


def _overlap(base: Summary, head: Summary) -> bool:
    return not (head.low > base.high or head.high < base.low)


def compare_samples(
    base: list[float],
    head: list[float],
    *,
    min_rel: float = MIN_REL_CHANGE,
    base_fallback: float | None = None,
    head_fallback: float | None = None,
) -> Change:
    """Judge two raw sample lists (ms), each through the policy. Fallbacks stand in for the
    figures of empty lists."""
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


def interval_x_text(speedup_ci: tuple[float, float] | None) -> str:
    """A speedup interval: ``[1.41x-1.58x]``, each bound on its side of 1x; "" without one."""
    if speedup_ci is None:
        return ""
    return f"[{beside_mark(speedup_ci[0], 1.0, 2)}x-{beside_mark(speedup_ci[1], 1.0, 2)}x]"


def beside_mark(v: float, mark: float, places: int, sign: str = "") -> str:
    """``v`` at ``places`` decimals, or at more where those would print ``mark`` for a value
    that is not: an interval that excludes 1x (the verdict's test) never reads as reaching it
    (``[0.76x-0.998x]``, not ``[0.76x-1.00x]``)."""
    text = f"{v:{sign}.{places}f}"
    while v != mark and float(text) == mark and places < 6:
        places += 1
        text = f"{v:{sign}.{places}f}"
    return text
