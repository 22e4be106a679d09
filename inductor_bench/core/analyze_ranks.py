"""Several ranks' traces analysed together (``ranks.py``): each read in its own process, their
ranks assigned, the traces of other runs named, and the straggler of each step. Pure, no torch."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

from .cut_short import cut_found_in_reading
from .errors import CutShort, NothingProfiled, TimesLost, UsageError
from .ranks import RankResult, RanksResult, Straggler, rank_of, rank_summary


def analyze_ranks(paths: list[Path], workers: int | None = None) -> RanksResult:
    """Each trace in its own process (at most ``workers``, default the CPU count), then the
    stragglers. A trace's rank comes from ``rank_of``, else its place among the traces that
    hold something: one with nothing profiled (a profiler cycle that stopped before its
    active steps) is left out and named in ``skipped``."""
    _assign_ranks(paths)  # a rank named twice fails before any trace is read
    return ranks_result(paths, read_summaries(paths, workers))


Read = RankResult | TimesLost | CutShort | None


def read_summaries(paths: list[Path], workers: int | None = None) -> list[Read]:
    """Each trace's ``rank_summary`` (None: nothing profiled; TimesLost: its device times lost;
    CutShort: found cut short as it was read),
    in its own process (at most ``workers``, default the CPU count; one: in this one, one trace
    after another)."""
    n = max(1, min(len(paths), workers or os.cpu_count() or 1))
    if n == 1:
        return [_summary_or_none(p) for p in paths]
    ctx = multiprocessing.get_context("spawn")  # no fork of a threaded parent
    with ProcessPoolExecutor(max_workers=n, mp_context=ctx) as pool:
        return list(pool.map(_summary_or_none, paths))


def ranks_result(paths: list[Path], read: list[Read]) -> RanksResult:
    """The ranks of the traces ``read`` from ``paths``, their stragglers, the traces skipped,
    those found cut short and those whose device times were lost (the other ranks analysed
    without them)."""
    cut = cut_found_in_reading(paths, read)
    kept = [(p, r) for p, r in zip(paths, read, strict=True) if isinstance(r, RankResult)]
    lost = [(p, r) for p, r in zip(paths, read, strict=True) if isinstance(r, TimesLost)]
    if not kept and lost:
        raise lost[0][1]
    if not kept:
        raise NothingProfiled.in_any_of(len(paths), cut=len(cut))
    kept_paths = [p for p, _ in kept]
    named = [rank_of(p) for p in kept_paths]  # each header read once
    ranks = _assign_ranks(kept_paths, named)
    results = [replace(r, rank=k) for (_, r), k in zip(kept, ranks, strict=True)]
    results.sort(key=lambda r: r.rank)
    skipped = [str(p) for p, r in zip(paths, read, strict=True) if r is None]
    lost_named = {str(p): k for p, _ in lost if (k := rank_of(p)) is not None}
    return RanksResult(ranks=results, stragglers=stragglers(results), skipped=skipped, cut_short=cut,
                       renumbered=renumbered(kept_paths, named), apart=apart(results),
                       times_lost=[str(p) for p, _ in lost],
                       times_lost_why={str(p): e.why for p, e in lost if e.why},
                       times_lost_rank=lost_named if None not in named else {})


def apart(ranks: list[RankResult]) -> str:
    """Which ranks' steps overlap no other rank's in time (the ranks of one run step together):
    the traces come from different runs, or from one process at different times."""
    spans = {r.rank: r.span_us for r in ranks if len(r.span_us) == 2}
    alone = [k for k, (a, b) in spans.items()
             if not any(a < d and c < b for j, (c, d) in spans.items() if j != k)]
    if len(spans) < 2 or not alone:
        return ""
    first, last = min(a for a, _ in spans.values()), max(b for _, b in spans.values())
    which = f"rank {alone[0]}" if len(alone) == 1 else "ranks " + ", ".join(map(str, alone))
    return (f"the steps of {which} overlap no other rank's in time (the traces span "
            f"{(last - first) / 1e6:.1f} s): traces of different runs, or of one process at different "
            "times, not the ranks of one run; their steps are compared below as if they were one run's")


def renumbered(paths: list[Path], named: list[int | None]) -> str:
    """Why the ranks the traces name (``named``: ``rank_of`` each) were set aside, where some
    name one and some do not."""
    unnamed = [p.name for p, r in zip(paths, named, strict=True) if r is None]
    if not unnamed or len(unnamed) == len(paths):
        return ""
    own = ", ".join(f"{p.name}: {r}" for p, r in zip(paths, named, strict=True) if r is not None)
    return (f"{', '.join(unnamed)} {'names' if len(unnamed) == 1 else 'name'} no rank, so every trace is "
            f"numbered in the order given, the ranks the others name set aside ({own}): give the "
            "traces of one run, each naming its rank, or none")


def _summary_or_none(path: Path) -> Read:
    """``rank_summary`` (its rank set by the caller), None for a trace with nothing profiled, the
    error for one whose device times were lost or that is cut short (the other ranks stand
    without it)."""
    try:
        return rank_summary(path, -1)
    except NothingProfiled:
        return None
    except (TimesLost, CutShort) as e:
        return e


def _assign_ranks(paths: list[Path], named: list[int | None] | None = None) -> list[int]:
    """Each trace's rank: the one it names (``named``, else ``rank_of`` each), or where any names
    none, its place in ``paths``; UsageError for a rank named twice."""
    named = [rank_of(p) for p in paths] if named is None else named
    if any(r is None for r in named):
        named = list(range(len(paths)))
    seen: dict[int, Path] = {}
    for p, r in zip(paths, named, strict=True):
        if r in seen:
            raise UsageError(f"{p}: rank {r} again (also {seen[r]}); give each rank's trace once "
                             "(of a profiler schedule's cycles, one cycle's traces)")
        seen[r] = p
    return [int(r) for r in named]  # type: ignore[arg-type]


def stragglers(ranks: list[RankResult]) -> list[Straggler]:
    """Per step (in the first rank's order) held by two ranks or more: the slowest rank
    against the median rank."""
    names = list(dict.fromkeys(s.step for r in ranks for s in r.steps))
    out = []
    for name in names:
        rows = sorted(
            ((s, r.rank) for r in ranks if (s := r.step(name))), key=lambda sr: (sr[0].wall_ms, sr[1])
        )
        if len(rows) < 2:
            continue
        (slow, rank), (mid, mid_rank) = rows[-1], rows[(len(rows) - 1) // 2]
        out.append(
            Straggler(
                step=name,
                rank=rank,
                wall_ms=slow.wall_ms,
                median_rank=mid_rank,
                median_wall_ms=mid.wall_ms,
                excess_ms=slow.wall_ms - mid.wall_ms,
                compute_ms=slow.compute_ms - mid.compute_ms,
                exposed_comm_ms=slow.exposed_comm_ms - mid.exposed_comm_ms,
                idle_ms=slow.idle_ms - mid.idle_ms,
                other_work_ms=slow.other_work_ms - mid.other_work_ms,
            )
        )
    return out
