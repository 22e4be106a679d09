"""Samples -> the policy's figure with its interval (``Summary``), and sums of such figures.

Every time is summarised by the one policy of ``core/steady.py``: the mean over the steady
samples (the disturbed ones, far slower than the median, left out and counted). Its interval
is the Student-t interval of that mean at ``MEAN_CONFIDENCE`` over the steady samples, whose
tails the rule has cut (a mean's interval is only as good as its tails).

A sum of independently measured parts (the graphs of a step, a category over graphs) is
``add``: the figures add up exactly, the intervals' half-widths in quadrature.

Pure Python; no torch.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from .steady import mean, spread_sigma, steady

# Confidence of each figure's interval; two of them make a 95% statement about the pair
# (``core/stats.py``).
MEAN_CONFIDENCE = 0.975


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


def sum_samples(lists: list[list[float]]) -> list[float]:
    """Element-wise sum of per-iteration sample lists, cut to the shortest.

    Returns ``[]`` when the list is empty or any list has no samples: a sum with a
    missing part would look faster than it is.
    """
    if not lists or any(not s for s in lists):
        return []
    n = min(len(s) for s in lists)
    return [math.fsum(s[i] for s in lists) for i in range(n)]
