"""A comparison's verdicts and the figures its report shows, for a script reading its JSON
(``summary`` in ``compare.json`` and ``--format json``): each timed column's step time and every
speedup the table shows, each with its interval and verdict. The report's cells come from the
same functions (``judge``, ``fastest``), so the two never differ. The summary is derived on
writing and never read back: the samples stay the record.

Its functions take a ``core.compare.CompareResult`` and its ``ModeResult`` columns, which
import them (``Any`` here: no import back)."""

from __future__ import annotations

import statistics
from dataclasses import replace
from typing import Any

from .devices import backend
from .load import Load
from .paired_rounds import median_ci_rank
from .stats import MIN_SAMPLES, TOO_FEW, Change, compare_samples, judge_paired
from .steady import limit_of
from .step import split_in_turns
from .unmeasured import unmeasured_graphs
from .vocab import CompileMode, Outcome, Verdict


def judge(result: Any, ref: Any, mode: Any) -> Change:
    """ref -> mode step time, with the significance floor of the result's device: round by
    round over the rounds every timed column ran when both were timed interleaved
    (``stats.judge_paired``), else their samples. Rounds with too few steady ones for an
    interval (``few_steady``) give a figure and the verdict ``not judged``."""
    floor = backend(result.device).min_rel_change
    if ref.paired_ms and mode.paired_ms:
        ch = judge_paired(result.common_blocks(ref), result.common_blocks(mode), min_rel=floor)
        # no verdict without an interval: a bound may be a disturbed round's ratio
        return replace(ch, verdict=Verdict.NOT_JUDGED) if ch.paired and few_steady(result, ref, mode) else ch
    return compare_samples(result.step_samples(ref), result.step_samples(mode), min_rel=floor)


# the words after "7 of 10" in every reason a figure of mostly disturbed rounds is not given
ROUNDS_DISTURBED = " rounds disturbed"
# Whose blocks a column's own count of disturbed rounds counts (``quiet_moments``), beside the
# count of rounds with either column's block disturbed that a speedup's ``n/m`` gives.
OWN_BLOCKS = " (its own blocks above its steady limit)"


def disturbed_rounds(result: Any, ref: Any, mode: Any) -> tuple[int, int]:
    """(disturbed, rounds) of the interleaved rounds ``ref -> mode`` is judged on: a round is
    disturbed where the median of either column's block lies above the statistics policy's
    steady limit (``steady.limit_of``) of that column's step samples, the samples its step time
    is the mean of (docs/statistics.md). (0, 0) where the two were not timed interleaved."""
    if not (ref.paired_ms and mode.paired_ms):
        return 0, 0
    limits = [limit_of(result.step_samples(m)) for m in (ref, mode)]
    rounds = [r for r in zip(result.common_blocks(ref), result.common_blocks(mode), strict=False) if all(r)]
    bad = sum(1 for r in rounds if any(lim is not None and statistics.median(blk) > lim
                                       for blk, lim in zip(r, limits, strict=True)))
    return bad, len(rounds)


def too_disturbed(result: Any, ref: Any, mode: Any) -> str | None:
    """Why no speedup of ``mode`` over ``ref`` is given: most of the rounds it would be the
    median of were disturbed (``7 of 10 rounds disturbed``); None where most were steady."""
    bad, n = disturbed_rounds(result, ref, mode)
    return f"{bad} of {n}{ROUNDS_DISTURBED}" if mostly(bad, n) else None


# what stands in a speedup's interval where disturbed rounds may set its bounds (``few_steady``)
FEW_STEADY = "too few steady rounds for an interval"


def few_steady(result: Any, ref: Any, mode: Any) -> str | None:
    """Why the speedup of ``mode`` over ``ref`` has no interval though it has a figure: its
    interval [x_(k), x_(n-k+1)] of the rounds' ratios leaves out k - 1 rounds on each side, so
    where k or more rounds were disturbed a bound may be a disturbed round's ratio (a stall in
    one block: ``[0.81x-61.28x]``), not the spread of the steady ones. None where fewer were."""
    bad, n = disturbed_rounds(result, ref, mode)
    return FEW_STEADY if n and bad >= median_ci_rank(n) else None


def mostly(bad: int, n: int) -> bool:
    """More than half of ``n`` rounds disturbed: no figure is the median of them."""
    return n > 0 and 2 * bad > n


def timed(m: Any) -> bool:
    """A column that ran and has step samples."""
    return m is not None and m.ok and bool(m.samples)


def fastest(result: Any) -> Any:
    """The mode with the highest speedup over the ``reference`` (itself 1.00x), round by round as
    the report's speedups are judged (``judge``: the median of the paired rounds' ratios, so that
    the column crowned is never one its own speedup reads slower than the reference), the lower
    step time on a tie; by step time where some column's ratio cannot be had. Of the
    ``candidates``."""
    ran = candidates(result)
    if not ran:
        return None
    base = reference(result) or ran[0]
    ratios = {m.label: 1.0 if m is base else judge(result, base, m).speedup for m in ran}
    if None in ratios.values():
        return min(ran, key=lambda m: result.step(m).ms)
    return min(ran, key=lambda m: (-ratios[m.label], result.step(m).ms))


def candidates(result: Any) -> list[Any]:
    """The columns the headline's may be: those that ran whose figure can be ranked
    (``unranked``) where any can, else those with MIN_SAMPLES steady samples or more, else
    those that ran."""
    ran = [m for m in result.modes if timed(m)]
    enough = [m for m in ran if result.step(m).n >= MIN_SAMPLES]
    return [m for m in enough if unranked(result, m) is None] or enough or ran


def reference(result: Any) -> Any:
    """The column the headline says whether any mode beats beyond noise: the (first) model's
    eager, else its default, of the ``candidates``; None where neither is one."""
    first = result.models[0] if len(result.models) > 1 else None
    ran = {id(m) for m in candidates(result)}
    modes = (CompileMode.EAGER, CompileMode.DEFAULT)
    cols = [result.mode(f"{first}:{mode}" if first else mode) for mode in modes]
    return next((m for m in cols if id(m) in ran), None)


def beats_every_other(result: Any, best: Any) -> bool:
    """``best`` significantly faster than every other of the ``candidates`` (and not too disturbed to
    say): a headline that crowns it needs no word of noise."""
    return all(judge(result, m, best).faster and not too_disturbed(result, m, best)
               for m in candidates(result) if m is not best)


def noise_only(result: Any, best: Any) -> bool:
    """Every other of the ``candidates`` judged against the ``reference`` (enough samples, rounds
    steady enough), none significantly faster, and ``best`` not significantly faster than every
    other: the headline says no mode is faster than the reference beyond noise before it names
    the fastest."""
    ref = reference(result)
    others = [m for m in candidates(result) if m is not ref]
    if ref is None or not others or faster_beyond_noise(result) or beats_every_other(result, best):
        return False
    judged = [judge(result, ref, m).verdict not in (TOO_FEW, Verdict.NOT_JUDGED) for m in others]
    return all(judged) and not any(too_disturbed(result, ref, m) for m in others)


def faster_beyond_noise(result: Any) -> list[str] | None:
    """The ``candidates`` significantly faster than the ``reference`` (and not too disturbed to say);
    an empty list: no mode is faster than it beyond noise; None where there is no reference."""
    ref = reference(result)
    if ref is None:
        return None
    return [m.label for m in candidates(result) if m is not ref
            and judge(result, ref, m).faster and not too_disturbed(result, ref, m)]


def unranked(result: Any, m: Any) -> str | None:
    """Why a timed column's step time is no headline (what it was read on): fewer than
    MIN_SAMPLES steady samples, or its quiet calls alone while most of its rounds were disturbed
    (``quiet_moments``: not the rounds the others' times are the means of); None where it can be
    ranked."""
    n = result.step(m).n
    if n < MIN_SAMPLES:
        return f"{n} steady sample{'s' if n != 1 else ''}, too few to rank"
    why = quiet_moments(result, m)
    return f"its quiet calls alone ({why}), not ranked" if why else None


def summary(result: Any) -> dict[str, Any]:
    """``step_ms``: column label -> its step time (the statistics policy's figure, its interval
    and sample counts); ``outside_ms``: its time outside the graphs, where measured;
    ``speedups``: each against eager and default of its model and, with several model files,
    against the first model's same mode; ``fastest``: the headline's column (None where none
    was timed); ``reference`` and ``faster_beyond_noise``: the column the headline judges the
    others against and those significantly faster than it (empty: none beyond noise; None where
    there is no eager or default column)."""
    best = fastest(result)
    return {
        "step_ms": {m.label: result.step(m).to_dict() for m in result.modes if timed(m)},
        # the "outside graphs, ms" row: the turns' share of the step times the column's step
        "outside_ms": {m.label: m.outside_ms() for m in result.modes if m.outside_ms() is not None},
        # those timed in turns on a busy machine (the (!) of the row): what disturbed them
        "outside_disturbed": {m.label: load.describe() for m in result.modes if (load := outside_load(m))},
        # step times of their quiet calls alone (the (!) of the step row): why
        "step_quiet_moments": {m.label: why for m in result.modes
                               if timed(m) and (why := quiet_moments(result, m))},
        "speedups": [_speedup(result, m, ref) for m, ref in _pairs(result)],
        "fastest": best.label if best is not None else None,
        "reference": ref.label if (ref := reference(result)) is not None else None,
        "faster_beyond_noise": faster_beyond_noise(result),
    }


def _pairs(result: Any) -> list[tuple[Any, Any]]:
    """(column, the column it is judged against), as the report's speedup rows pair them."""
    out = []
    for m in result.modes:
        refs = [result.mode(f"{m.model}:{over}" if m.model else over)
                for over in (CompileMode.EAGER, CompileMode.DEFAULT)]
        if len(result.models) > 1:
            refs.append(result.mode(f"{result.models[0]}:{m.mode}"))
        labels = {ref.label: ref for ref in refs if ref is not None}  # one pair per column judged against
        out += [(m, ref) for ref in labels.values() if ref is not m and timed(ref) and timed(m)]
    return out


def _speedup(result: Any, m: Any, ref: Any) -> dict[str, Any]:
    """One speedup row; where most of its rounds were disturbed (``too_disturbed``), no speedup
    and no interval, the verdict ``no speedup`` and the reason (``no_speedup``), as the report's
    ``n/m`` cell; where a graph of either breakdown was measured on one side only
    (``graphs_unmeasured``), none either, the verdict ``not comparable`` and what
    (``not_comparable``); where enough were disturbed to set its bounds (``few_steady``), no
    interval and why (``no_interval``); the change's raw figures stay."""
    ch, why, few = judge(result, ref, m), too_disturbed(result, ref, m), few_steady(result, ref, m)
    gap = None if why else graphs_unmeasured(result, ref, m)
    return {
        "column": m.label,
        "over": ref.label,
        "speedup": None if why or gap else ch.speedup,  # ref's step / the column's: above 1 is faster
        "interval": list(ch.speedup_ci) if ch.speedup_ci and not (why or gap or few) else None,
        "verdict": "no speedup" if why else Outcome.NOT_COMPARABLE if gap else ch.verdict,
        "change": ch.to_dict(),
    } | ({"no_speedup": why} if why else {"not_comparable": gap} if gap
         else {"no_interval": few} if few else {})


def graphs_unmeasured(result: Any, ref: Any, m: Any) -> str | None:
    """Why a later model file's column, timed, is judged against the first model's column of
    its mode (``ref``) by no speedup: graphs of their breakdowns measured on one side only
    (failed, timed out, missing from an interrupted run), which the merge gate reads as not
    comparable (``compare_gate.not_measured``), so that no cell, headline or JSON gives the
    pair the verdict the gate refuses it. None for any other pair, or where none is missing."""
    first = result.models[0] if len(result.models) > 1 else None
    if first is None or ref is m or ref.model != first or m.model == first or ref.mode != m.mode:
        return None
    if not (ref.breakdown and m.breakdown):
        return None
    gaps = unmeasured_graphs(ref.breakdown, m.breakdown, m.label, (ref.model, m.model))
    return "; ".join(u.missing() for u in gaps) or None


def outside_load(m: Any) -> Load | None:
    """The load from other processes while the turns a column's time outside the graphs comes
    from ran (``ModeResult.split``: the timing worker's, else its breakdown's), where it disturbed
    them: that time is a difference of two times each slowed by its own stalls (a block of one
    step call keeps its stall, a graph's block of several calls leaves it out), so it may be far
    off: beside other processes keeping 1.6 of 2 cores busy, mlp's training step read 4.434 ms
    outside its graphs where its quiet rounds put it at 0.3 ms. None where it stands undisturbed."""
    if (b := m.breakdown) is None or m.outside_ms() is None:
        return None
    timer = all(g.ok for g in b.graphs) and split_in_turns(m.step_turns, b.weights()) is not None
    turns = m.step_turns if timer else b.step_turns if split_in_turns(b.step_turns, b.weights()) else None
    load = Load.from_dict(turns.load if turns is not None else None)
    return load if load is not None and load.disturbed else None


def quiet_moments(result: Any, m: Any) -> str | None:
    """Why a column's step time is the mean of its quiet calls alone: most of its own interleaved
    blocks' medians lie above its steady limit (``disturbed_rounds`` of it with itself), which is
    then the faster half's, so the figure is of the moments the load let it run, not of the rounds
    the other columns' figures are the means of (``9 of 10 rounds disturbed``); None where most
    were steady."""
    bad, n = disturbed_rounds(result, m, m)
    return f"{bad} of {n}{ROUNDS_DISTURBED}" if mostly(bad, n) else None


def column_marks(result: Any) -> list[str]:
    """A warning for each ``(!)`` of the table: a step time of its quiet calls alone
    (``quiet_moments``), a time outside the graphs timed on a busy machine (``outside_load``)."""
    steps = [f"{m.label}: step time (!): {why}{OWN_BLOCKS}: its "
             f"{result.step(m).ms:.3f} ms is the mean of its quiet calls alone ({result.step(m).n} of "
             f"{len(result.step_samples(m))}), not of the rounds the other columns' times are the means of"
             for m in result.modes if timed(m) and (why := quiet_moments(result, m))]
    return steps + [f"{m.label}: outside graphs (!): its step and its graphs were timed in turns while "
                    f"{load.describe()}: the {m.outside_ms():.3f} ms outside them, a difference of two "
                    "times each slowed by its own stalls, may be far off"
                    for m in result.modes if (load := outside_load(m)) is not None]

