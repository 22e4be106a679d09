"""A ``RanksResult``'s typical step per rank (the mean of its steady steps): time by category
and each record_function range, which rank spends longest in it."""

from __future__ import annotations

from ..core.analyze import WHOLE_TRACE, is_host
from ..core.categories import label, order
from ..core.ranks import RankResult, RanksResult
from ..core.regions import typical
from ..core.steady import mean
from . import charts_ranks as charts
from . import format as fmt
from .analyze_top import NAME_CHARS  # the same kernel column as one trace's report
from .doc import Doc

TOP_CATEGORIES = 6


def typical_categories(rank: RankResult) -> dict[str, float]:
    """Category -> ms in the rank's typical step: the mean over its steady steps."""
    kept = [rank.steps[i] for i in rank.steady_indices()]
    cats = {c for s in kept for c in s.categories}
    return {c: mean([s.categories.get(c, 0.0) for s in kept]) for c in sorted(cats, key=order)}


def whole_trace(rank: RankResult) -> bool:
    """The rank's trace has no step markers: its one window is the whole trace."""
    return bool(rank.steps) and rank.steps[0].step == WHOLE_TRACE


def _rank_cell(r: RanksResult, rank: int) -> str:
    """A rank as a typical-step table names it: ``3 (whole trace)`` where it has no steps."""
    return f"{rank} (whole trace)" if any(whole_trace(x) for x in r.ranks if x.rank == rank) else str(rank)


def typical_scope(r: RanksResult) -> str:
    """What a rank's row of a typical-step table or chart covers, as its heading says: ``steady
    mean step``; ``steady mean step; rank 3: whole trace`` where some ranks have no steps."""
    whole = [str(rank.rank) for rank in r.ranks if whole_trace(rank)]
    if not whole:
        return charts.STEADY
    if len(whole) == len([rank for rank in r.ranks if rank.steps]):
        return "whole trace"
    return f"{charts.STEADY}; {'rank' if len(whole) == 1 else 'ranks'} {', '.join(whole)}: whole trace"


def _whole_note(r: RanksResult) -> list[str]:
    """What a row of a rank without step markers is, under a typical-step table."""
    whole = [str(rank.rank) for rank in r.ranks if whole_trace(rank)]
    if not whole:
        return []
    one = len(whole) == 1
    who, its = ("rank", "its") if one else ("ranks", "their")
    return [f"{who} {', '.join(whole)}: no ProfilerStep# markers, so {its} figures are of "
            f"{'its' if one else 'each'} whole trace (all it recorded), not of one step."]


def ranks_categories_section(doc: Doc, r: RanksResult) -> None:
    per_rank = {rank.rank: typical_categories(rank) for rank in r.ranks if rank.steps}
    totals: dict[str, float] = {}
    for cats in per_rank.values():
        for c, v in cats.items():
            totals[c] = totals.get(c, 0.0) + v
    if not totals:
        return
    shown = sorted(totals, key=lambda c: -totals[c])[:TOP_CATEGORIES]
    rest = [c for c in totals if c not in shown]
    rows = [
        [_rank_cell(r, rank), *(fmt.ms(cats.get(c, 0.0)) for c in shown)]
        + ([fmt.ms(sum(cats.get(c, 0.0) for c in rest))] if rest else [])
        for rank, cats in per_rank.items()
    ]
    headers = ["rank", *(label(c) for c in shown), *(["the rest"] if rest else [])]
    doc.heading(f"Time by category per rank ({typical_scope(r)}, ms)")
    doc.table(rows, headers, ("left", *("right",) * (len(headers) - 1)))
    doc.fine_print(HOST_CATEGORIES_NOTE if all(is_host(rank.device) for rank in r.ranks)
                   else "Summed kernel durations (concurrent streams can exceed busy).", *_whole_note(r))
    doc.chart(charts.ranks_categories({_rank_cell(r, rank): cats for rank, cats in per_rank.items()},
                                      typical_scope(r)))


HOST_CATEGORIES_NOTE = (
    "CPU-only ranks: summed durations of the busiest thread's top-level ops, as one trace's category "
    "table gives them. Its communication is its collectives' own ops (c10d::allreduce_), whatever "
    "they cover: the work handed to gloo's threads, or the wait for it. The steps table's comm "
    "also counts those threads' ranges (gloo:all_reduce): in each step it covers that step's ops, "
    "but a step's can read less than this mean (one step whose ops ran long raises it)."
)


def typical_regions(rank: RankResult) -> dict[str, tuple[float, float]]:
    """Range name -> (calls, wall ms) in the rank's typical step: the mean over its steady steps."""
    kept = rank.steady_indices()
    return {g.name: (g.calls, g.wall_ms) for g in typical(rank.regions, kept)}


def ranks_regions_section(doc: Doc, r: RanksResult, top: int) -> None:
    """Each record_function range across the ranks: which rank spends longest in it."""
    per_rank = {rank.rank: typical_regions(rank) for rank in r.ranks if rank.steps}
    names = sorted({n for v in per_rank.values() for n in v},
                   key=lambda n: (-max(v.get(n, (0, 0.0))[1] for v in per_rank.values()), n))
    if not names:
        return
    rows = []
    for n in names[:top]:
        walls = sorted((v[n][1], rank) for rank, v in per_rank.items() if n in v)
        (low, fast), (high, slow) = walls[0], walls[-1]
        rows.append([doc.code(doc.whole_cell(n, NAME_CHARS)), str(len(walls)),
                     f"rank {_rank_cell(r, fast)}: {fmt.ms(low)}", fmt.ms(walls[(len(walls) - 1) // 2][0]),
                     f"rank {_rank_cell(r, slow)}: {fmt.ms(high)}", fmt.ms_between(low, high, fmt.ms)])
    shown = f"top {top} of {len(names)}, " if len(names) > top else ""
    doc.heading(f"Named ranges per rank: record_function ({shown}{typical_scope(r)}, wall ms)")
    doc.table(rows, ["range", "ranks", "fastest", "median", "slowest", "spread"],
              ("left", *("right",) * 5))
    doc.fine_print(
        "wall = the union of the range's calls on the CPU in the rank's typical step (the mean over "
        "its steady steps); median = the middle rank's (the lower middle of an even count); spread = "
        "slowest - fastest: a phase that one rank spends longer in than the others (docs/analyze.md).",
        *_whole_note(r),
    )
