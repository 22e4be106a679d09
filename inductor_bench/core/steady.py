"""The one statistics policy: which samples are steady, and every reported time as the mean
over them.

A sample (one profiled iteration, one timed step, one round) is **disturbed** when it is
slower than the median of its set by more than ``TAIL_SIGMAS`` robust standard deviations
(the median absolute deviation scaled to a normal sigma) and by more than ``TAIL_FLOOR`` of the
median. A profiled iteration is also disturbed when one of its parts (a kernel's time in it,
a call's of a kernel called at several places, or its idle time between kernels:
``core/parts.py``) is so much slower than that part's own median, by more than
``EXCESS_FLOOR`` of the iteration's median wall time: on a busy machine most iterations lose
the CPU somewhere, their walls spread, and a stall inside one small kernel hides in the wall's
spread while it multiplies that kernel's time. And it is disturbed when the worker's own clock
reading of it, by which its window was chosen, is beyond that reading's limit. Disturbed
samples are left out, counted and reported; every figure is the mean over the rest, the
**steady** samples.

Why this rule (docs/statistics.md has the measurements):

- A stall from another process (a preemption, a burst on every core, a page-fault storm)
  adds milliseconds to the iteration it lands in: 2.5-9x a typical iteration here. The mean
  over all iterations follows those few; the median and the MAD do not, so a limit built
  from them finds them whatever their size, and leaves out nothing on a quiet machine but
  the rare iteration that was itself disturbed.
- The mean over ONE set of iterations adds up exactly: a graph's kernels, its categories, its
  busy time and its wall time are all means over the same steady iterations, so categories
  sum to the kernel time, kernels to their categories, call sites to their op, views to the
  kernel total, graphs to the step, and busy never exceeds wall. Medians of the parts would
  not add up to the median of the whole.
- Only slow samples are left out: nothing makes an iteration faster than the work it does.
  So where the median of a set lies far above its faster half (two of that half's own margins
  above its median), the median itself is a stall: half the set or more was slowed (on a
  loaded machine, 12 calls of a block of 25 at 176 ms against 2 ms, and the set's MAD so wide
  that no call passed its limit). The limit is then the faster half's.
- Below ``MIN_STEADY`` samples the median says too little to judge; all samples are kept.

Pure Python; no torch.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# Scales a MAD to a standard deviation for normally distributed samples (1 / Phi^-1(3/4)).
MAD_TO_SIGMA = 1.4826
# Scales a mean absolute deviation to a standard deviation for normal samples (sqrt(pi / 2)):
# the spread where the MAD is 0 (Iglewicz and Hoaglin's modified z-score does the same).
MEAN_AD_TO_SIGMA = 1.2533
# 3.5 robust sigmas: a normal sample passes it but for 2 in 10,000; the timing tails seen on a
# quiet machine here (a few percent of iterations 20-50% slow) mostly pass too.
TAIL_SIGMAS = 3.5
# ... and at least 5% over the median: with a very tight set (a GPU kernel timed to 0.5%) a
# sample 2% slow is no disturbance worth a word.
TAIL_FLOOR = 0.05
# A part's excess over its median disturbs its iteration only from the wall's own floor of the
# iteration's median wall: a part that slowed its iteration by less than a slower wall would
# be allowed is no disturbance. A graph has 7-10 parts, and on a quiet machine their tails add
# up: at 2% the recorded quiet run's backward lost 44 of 100 iterations to kernels 0.025-0.030
# ms slow (2.0-2.4% of its wall), its figure 1.9% below the median; at 5%, 4 (docs/statistics.md).
EXCESS_FLOOR = TAIL_FLOOR
MIN_STEADY = 5
# The version of the rules of this module and ``core/parts.py`` (which samples are left out,
# and the parts an iteration is judged by): raised by any change to what they keep. A result
# records the rules that judged its graphs' iterations (``rules`` in breakdown.json and
# compare.json; a result without one was saved before they were numbered), and ``report`` and
# ``diff`` say where that is not these (``core/judged.py``).
RULES = 2
# The set's median is a stall where it lies this many margins above the faster half's median.
# One margin lies 1.5 sigmas above the median of normal samples on average, yet sets of 9 or 10
# normal samples met it in 1% of draws (3.6% of log-normal ones, sigma 0.3, skewed as timings
# are); two margins in 0.2% (1.7%), and no set of 15 samples or more in 4,000 draws.
STALLED_MEDIAN_MARGINS = 2


@dataclass(frozen=True)
class Steady:
    """The policy applied to one sample set: the indices kept and the limit above which a
    sample was left out (None when the set was too small to judge)."""

    n: int
    kept: tuple[int, ...]
    limit: float | None
    # where the rule for profiled iterations found so many disturbed that fewer than
    # MIN_STEADY would remain, and the walls alone decided: the iterations it had found
    abandoned: tuple[int, ...] = ()

    @property
    def left_out(self) -> tuple[int, ...]:
        keep = set(self.kept)
        return tuple(i for i in range(self.n) if i not in keep)

    def pick(self, values: Sequence[float]) -> list[float]:
        """The steady values of a series aligned with the set (one value per sample)."""
        return [values[i] for i in self.kept if i < len(values)]

    def mean(self, values: Sequence[float]) -> float:
        """The mean of a series aligned with the set over the steady samples (0 for none)."""
        return mean(self.pick(values))


def robust_sigma(values: Sequence[float], center: float | None = None) -> float:
    """The median absolute deviation from ``center`` (the median), scaled to a normal sigma."""
    if not values:
        return 0.0
    c = statistics.median(values) if center is None else center
    return MAD_TO_SIGMA * statistics.median(abs(x - c) for x in values)


def spread_sigma(values: Sequence[float]) -> float:
    """The spread a report shows: the robust sigma, or where over half the values are equal
    and the rest are not (a MAD of 0: event times on a clock's ticks), the mean absolute
    deviation from the median scaled to a sigma, which is 0 only when every value is equal."""
    sigma = robust_sigma(values)
    if sigma > 0 or not values:
        return sigma
    med = statistics.median(values)
    return MEAN_AD_TO_SIGMA * math.fsum(abs(x - med) for x in values) / len(values)


def plain_limit_of(values: Sequence[float]) -> float | None:
    """The limit of the median and its margin alone: the rule for a loop's steps, which may
    alternate two kinds of work (``steady_held``, ``steady_iterations``'s default)."""
    return None if len(values) < MIN_STEADY else statistics.median(values) + _margin(
        values, statistics.median(values))


def limit_of(values: Sequence[float]) -> float | None:
    """The value above which a sample of this set is disturbed; None below MIN_STEADY. Where
    the set's median lies two margins above the median of the faster half of the set (its
    median included; the margin that half's own, ``_margin``), the median is itself a stall:
    half the set or more was slowed. The limit is then the faster half's: its median and one
    margin."""
    if len(values) < MIN_STEADY:
        return None
    med = statistics.median(values)
    faster = sorted(values)[: (len(values) + 1) // 2]
    if len(faster) >= MIN_STEADY:
        fast_med = statistics.median(faster)
        margin = _margin(faster, fast_med)
        if med > fast_med + STALLED_MEDIAN_MARGINS * margin:
            return fast_med + margin
    return med + _margin(values, med)


def _margin(values: Sequence[float], med: float) -> float:
    """How far above its median a sample of this set may lie and still be steady."""
    return max(TAIL_SIGMAS * robust_sigma(values, med), TAIL_FLOOR * abs(med))


def steady(values: Sequence[float], limit: Callable[[Sequence[float]], float | None] = limit_of) -> Steady:
    """Apply the rule of this module to one sample set (``limit``: ``plain_limit_of`` for
    profiled iterations)."""
    lim = limit(values)
    kept = tuple(i for i, x in enumerate(values) if lim is None or x <= lim)
    return Steady(n=len(values), kept=kept, limit=lim)


def steady_iterations(walls: Sequence[float], parts: Sequence[Sequence[float]], clock: Sequence[float] = (),
                      limit: Callable[[Sequence[float]], float | None] = plain_limit_of) -> Steady:
    """The rule for profiled iterations: a wall beyond its limit, or a part (one series per
    kernel, aligned with ``walls``) beyond its own limit by more than EXCESS_FLOOR of the median
    wall, or an iteration the rule leaves out of ``clock`` (the worker's own reading of each
    iteration, aligned with ``walls``; the windows are ranked by it): on a window split between
    two speeds the rule's verdict on the two readings can differ, and the figure must be of the
    iterations its window was chosen by. Should fewer than MIN_STEADY iterations pass, the
    walls alone decide. ``limit`` judges the walls, the parts and the clock: the median's own
    margin (``plain_limit_of``), or ``limit_of`` for iterations or rounds of one call repeated,
    of which a stalled majority is no work of their own."""
    by_wall = steady(walls, limit)
    if by_wall.limit is None:
        return by_wall
    bad = set(by_wall.left_out) | set(parts_over(walls, parts, limit))
    if clock and len(clock) == len(walls):
        bad |= set(steady(clock, limit).left_out)
    kept = tuple(i for i in range(len(walls)) if i not in bad)
    if len(kept) >= MIN_STEADY:
        return Steady(len(walls), kept, by_wall.limit)
    return Steady(by_wall.n, by_wall.kept, by_wall.limit, abandoned=tuple(sorted(bad)))


def parts_over(walls: Sequence[float], parts: Sequence[Sequence[float]],
               limit: Callable[[Sequence[float]], float | None] = limit_of) -> dict[int, dict[int, float]]:
    """The part rule of ``steady_iterations``: for each iteration some part (a series aligned
    with ``walls``) put beyond its own limit by more than EXCESS_FLOOR of the median wall, those
    parts (by their index in ``parts``) and each one's excess over its own median."""
    if limit(walls) is None:
        return {}
    floor = EXCESS_FLOOR * statistics.median(walls)
    over: dict[int, dict[int, float]] = {}
    for j, xs in enumerate(parts):
        lim = limit(xs)
        if lim is None:
            continue
        med = statistics.median(xs)
        for i, x in enumerate(xs):
            if x > lim and x - med > floor:
                over.setdefault(i, {})[j] = x - med
    return over


def steady_profiled(walls: Sequence[float], busy: Sequence[float], kernels: Sequence[Sequence[float]],
                    clock: Sequence[float] = ()) -> Steady:
    """``steady_iterations`` of one graph's profiled iterations: its parts are each kernel's
    time and the idle time between kernels (wall less busy) in each iteration. Each iteration
    runs the same compiled graph on the same inputs, so a stalled majority is judged by the
    faster half's limit (``limit_of``)."""
    idle = [w - b for w, b in zip(walls, busy, strict=True)]
    return steady_iterations(walls, [*kernels, idle], clock, limit=limit_of)


def steady_held(walls: Sequence[float], held: Sequence[bool]) -> list[int]:
    """The steps a typical step is the mean of: of those that hold anything (``held``; a step the
    profiler stopped in as it opened holds nothing, and is no step of the loop's; all where none
    does), the steady ones by their wall."""
    among = [i for i, h in enumerate(held) if h] or list(range(len(walls)))
    # a loop's steps may alternate two kinds (an optimizer step every other micro-batch): its
    # slower half is its own work, not a stall, so the median's own margin judges them
    return [among[i] for i in steady([walls[i] for i in among], plain_limit_of).kept]


def from_left_out(n: int, left_out: Sequence[int], limit: float | None = None) -> Steady:
    """The set of ``n`` samples less those recorded as left out (a saved result)."""
    out = set(left_out)
    return Steady(n=n, kept=tuple(i for i in range(n) if i not in out), limit=limit)


def mean(values: Sequence[float]) -> float:
    """Plain mean with exact summation (0 for no values)."""
    return math.fsum(values) / len(values) if values else 0.0


def steady_mean(values: Sequence[float]) -> float:
    """The policy's figure for one sample set."""
    return steady(values).mean(values)
