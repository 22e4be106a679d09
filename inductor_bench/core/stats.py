"""Samples -> median, spread, and whether two sample sets really differ.

The rule, in one sentence: a change is **significant** when both sides have at least
``MIN_SAMPLES`` samples and the difference of the medians exceeds both a minimum relative
change of the base median (the device's floor, ``Backend.min_rel_change``) and
``NOISE_K`` x sqrt(sigma_base^2 + sigma_head^2), where sigma = ``MAD_TO_SIGMA`` x the median
absolute deviation of that side's samples.
Otherwise it is **within noise**, or **too few samples** when a side has fewer than
``MIN_SAMPLES``.

Pure Python; no torch.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from .vocab import Verdict

# Below five samples the median absolute deviation is mostly luck (with three samples it
# is the distance to one neighbour), so no spread can be trusted and nothing is called
# significant.
MIN_SAMPLES = 5

# Scales a MAD to a standard deviation for normally distributed samples (1 / Phi^-1(3/4)).
# The MAD is used instead of the standard deviation because timing samples have long
# tails (a GC pause, a page fault, a clock change) that would inflate a standard deviation.
MAD_TO_SIGMA = 1.4826

# The difference of medians must stand clear of the scatter of single iterations, not just
# of the uncertainty of the medians: samples taken in one run share clocks, temperature and
# cache state, so they understate how much a second run can move. Three combined sigmas
# means the two sample clouds barely overlap.
NOISE_K = 3.0

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
        }


def summarize(samples: list[float], fallback: float | None = None) -> Summary:
    """Summarize samples; with none, the median is ``fallback`` (e.g. a recorded mean)."""
    if not samples:
        value = fallback if fallback is not None else 0.0
        return Summary(n=0, median=value, mad=0.0, min=value, max=value)
    med = statistics.median(samples)
    mad = statistics.median(abs(x - med) for x in samples)
    return Summary(n=len(samples), median=med, mad=mad, min=min(samples), max=max(samples))


@dataclass(frozen=True)
class Change:
    """Base -> head for one measured quantity."""

    base: Summary
    head: Summary
    noise_ms: float  # NOISE_K x combined sigma: the smallest difference that stands out
    min_change_ms: float  # min_rel x base median
    verdict: str  # SIGNIFICANT | WITHIN_NOISE | TOO_FEW

    @property
    def delta_ms(self) -> float:
        return self.head.median - self.base.median

    @property
    def rel_pct(self) -> float | None:
        """Change of the median in % of the base median (None when the base is 0)."""
        if self.base.median > 0:
            return 100.0 * self.delta_ms / self.base.median
        return None

    @property
    def significant(self) -> bool:
        return self.verdict == SIGNIFICANT

    @property
    def slower(self) -> bool:
        """A significant increase of time (a regression)."""
        return self.significant and self.delta_ms > 0

    @property
    def faster(self) -> bool:
        return self.significant and self.delta_ms < 0

    @property
    def speedup(self) -> float | None:
        """base / head medians (> 1 means head is faster)."""
        if self.head.median > 0:
            return self.base.median / self.head.median
        return None

    def to_dict(self) -> dict[str, object]:
        return {
            "base": self.base.to_dict(),
            "head": self.head.to_dict(),
            "delta_ms": self.delta_ms,
            "rel_pct": self.rel_pct,
            "noise_ms": self.noise_ms,
            "min_change_ms": self.min_change_ms,
            "verdict": self.verdict,
        }


def judge(base: Summary, head: Summary, min_rel: float = MIN_REL_CHANGE) -> Change:
    """Apply the significance rule of this module to two summaries."""
    noise = NOISE_K * math.hypot(base.sigma, head.sigma)
    min_change = min_rel * base.median
    if base.n < MIN_SAMPLES or head.n < MIN_SAMPLES:
        verdict = TOO_FEW
    elif abs(head.median - base.median) > max(noise, min_change):
        verdict = SIGNIFICANT
    else:
        verdict = WITHIN_NOISE
    return Change(base=base, head=head, noise_ms=noise, min_change_ms=min_change, verdict=verdict)


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
