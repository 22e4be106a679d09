"""Whether two sample sets really differ: the significance rule, on figures and on paired rounds.

Each side is summarised by ``core/summaries.py`` (the policy's figure, the mean over the steady
samples, with its ``MEAN_CONFIDENCE`` Student-t interval).

The rule, in one sentence: a change is **significant** when both sides have at least
``MIN_SAMPLES`` steady samples, the intervals of the two figures do not overlap, and the
ratio head / base lies beyond a minimum relative change (the device's floor for run-to-run
drift, ``Backend.min_rel_change``): above ``1 + min_rel`` or below ``1 / (1 + min_rel)``, so
that the verdict does not depend on which side is the base (1.11x faster one way is 0.90x the
other). Otherwise it is **within noise**, or **too few samples**
when a side has fewer than ``MIN_SAMPLES``. Two intervals at 97.5% each hold both true values
with probability at least 95% (Bonferroni), so non-overlapping intervals mean a difference at
that confidence; the ratio head / base then lies within ``Change.ratio_ci``, which reports print.

**Paired** (``judge_paired``): when both sides were timed in one process, their calls interleaved in
blocks (round r: a block of base calls and a block of head calls, the order alternating), each round
gives one ratio of the blocks' figures, head / base. Drift of the machine (another tenant, a clock, a
process that settles at a speed of its own) moves both blocks of a round alike and cancels in the ratio.
The change is the median of the rounds' ratios (of an even number, the geometric mean of the middle
two), its interval the distribution-free ``PAIR_CONFIDENCE`` interval of that median (order statistics
``x_(k)``, ``x_(n-k+1)`` with ``k`` the largest rank for which a Binomial(n, 1/2) leaves at most the
tail outside: ``core/paired_rounds.py``), and it is significant when the interval excludes 1 and the
median ratio lies beyond the minimum relative change, the same symmetric test. A ratio is a verdict,
not a time: no round is left out of it.

Pure Python; no torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from .paired_rounds import PAIR_CONFIDENCE, Paired, median_ci_rank, median_ratio, round_ratios
from .steady import MAD_TO_SIGMA as MAD_TO_SIGMA  # re-exported: reports quote it
from .summaries import Summary as Summary  # re-exported: a change is of two of them
from .summaries import summarize as summarize
from .vocab import Verdict

# Below five samples the spread is mostly luck (with three samples it is the distance to one
# neighbour), so no interval can be trusted and nothing is called significant.
MIN_SAMPLES = 5

# Changes smaller than this are not called significant however tight the samples are:
# two runs of the same model on the same machine differ by a few percent from clocks,
# heat and scheduling that no single run can see. Each backend sets its own floor
# (``Backend.min_rel_change`` in core/devices.py, with the measurements behind it); this one
# is the default of the functions below.
MIN_REL_CHANGE = 0.05

SIGNIFICANT = Verdict.SIGNIFICANT
WITHIN_NOISE = Verdict.WITHIN_NOISE
TOO_FEW = Verdict.TOO_FEW
NOT_JUDGED = Verdict.NOT_JUDGED


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


def interval_x_text(speedup_ci: tuple[float, float] | None, min_rel: float | None = None) -> str:
    """A speedup interval: ``[1.41x-1.58x]``, each bound on its side of 1x and, given the
    verdict's minimum change ``min_rel``, of its floors (``floor_marks``); "" without one."""
    if speedup_ci is None:
        return ""
    lo, hi = (bound_text(v, 1.0, floor_marks(min_rel), 2) for v in speedup_ci)
    return f"[{lo}x-{hi}x]"


def floor_marks(min_rel: float | None) -> tuple[float, ...]:
    """The ratios a change must pass to be significant (``beyond``): ``1 + min_rel`` and its
    inverse; none without a minimum."""
    return (1 + min_rel, 1 / (1 + min_rel)) if min_rel else ()


def bound_text(v: float, mark: float, floors: tuple[float, ...], places: int, sign: str = "") -> str:
    """An interval's bound as ``beside_mark`` prints it, at more decimals where those would put
    it on the other side of a floor: the figure it bounds gets them there (``1.097x`` under a
    1.10x floor), so that a bound never reads beyond its figure (``1.097x [1.10x-1.31x]``, its
    low bound 1.0965)."""
    return past_floors(v, beside_mark(v, mark, places, sign), floors, sign)


def past_floors(v: float, text: str, floors: tuple[float, ...], sign: str = "") -> str:
    """``text``, ``v`` printed, at more decimals (up to 6) while it reads on the other side of
    a floor than ``v`` is."""
    places = len(text.partition(".")[2])
    while places < 6 and any((float(text) >= m) != (v >= m) for m in floors):
        places += 1
        text = f"{v:{sign}.{places}f}"
    return text


def beside_mark(v: float, mark: float, places: int, sign: str = "") -> str:
    """``v`` at ``places`` decimals, or at more where those would print ``mark`` for a value
    that is not: an interval that excludes 1x (the verdict's test) never reads as reaching it
    (``[0.76x-0.998x]``, not ``[0.76x-1.00x]``)."""
    text = f"{v:{sign}.{places}f}"
    while v != mark and float(text) == mark and places < 6:
        places += 1
        text = f"{v:{sign}.{places}f}"
    return text
