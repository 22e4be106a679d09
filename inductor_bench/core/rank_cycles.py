"""Several ranks' profiler cycles. A distributed run profiled under a ``schedule`` with
``tensorboard_trace_handler`` writes, per rank, one trace per cycle into one directory
(``<host>_<pid>.<ns>.pt.trace.json``, the rank in each trace's ``distributedInfo`` header):
each rank appears once per cycle. The ranks' cycles are matched by their order in each rank
(by the first ``ProfilerStep#N`` they hold, then when they were written), and each cycle is
analysed as the set of ranks it is (``ranks.py``)."""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .analyze_ranks import ranks_result, read_summaries
from .columns import STEP_NAME
from .cut_short import cut_found_in_reading
from .errors import NothingProfiled, TimesLost, UsageError
from .first_few import first_few
from .ns_figures import ns_json
from .ranks import RankResult, RanksResult, rank_of
from .trace_sets import origin_of

SCHEMA = "inductor-bench/analyze-rank-cycles"
SCHEMA_VERSION = 1


@dataclass
class RankCyclesResult:
    """Each profiler cycle's ranks, in the order the cycles ran; ``skipped``: the traces
    with nothing profiled (the cycle each rank's profiler writes when it exits)."""

    cycles: list[RanksResult]
    skipped: list[str] = field(default_factory=list)
    not_traces: list[str] = field(default_factory=list)  # a directory's JSON files that are no trace
    cut_short: dict[str, str] = field(default_factory=dict)  # traces cut short among several: why
    schema: str = SCHEMA
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return ns_json(self.to_dict())


def repeats_ranks(paths: list[Path]) -> bool:
    """True where every trace names its rank, two ranks at least, and some rank is named
    twice: cycles."""
    named = [rank_of(p) for p in paths]
    return None not in named and 1 < len(set(named)) < len(named)


def analyze_rank_cycles(paths: list[Path], workers: int | None = None,
                        cut_before: Collection[Path] = ()) -> RankCyclesResult:
    """Each trace read once (``read_summaries``); per rank its cycles in order; cycle ``i``
    the ``i``-th of every rank. UsageError where the ranks hold different numbers of cycles,
    naming the traces left out as cut short (those found so as they were read, and
    ``cut_before``, found before)."""
    read = read_summaries(paths, workers)
    cut = cut_found_in_reading(paths, read)
    if lost := [r for r in read if isinstance(r, TimesLost)]:  # a rank short of a cycle: refused
        raise lost[0]
    skipped = [str(p) for p, r in zip(paths, read, strict=True) if r is None]
    by_rank: dict[int, list[tuple[Path, RankResult]]] = {}
    for p, r in zip(paths, read, strict=True):
        if isinstance(r, RankResult):
            by_rank.setdefault(int(rank_of(p)), []).append((p, r))  # type: ignore[arg-type]
    if not by_rank:
        raise NothingProfiled.in_any_of(len(paths), cut=len(cut))
    for traces in by_rank.values():
        traces.sort(key=lambda pr: (_first_step(pr[1]), origin_of(pr[0]).began_ns or 0, pr[0].name))
    counts = {rank: len(traces) for rank, traces in sorted(by_rank.items())}
    if len(set(counts.values())) > 1:
        raise _uneven(counts, [*map(str, cut_before), *cut])
    cycles = []
    for i in range(next(iter(counts.values()))):
        cycle = [by_rank[rank][i] for rank in counts]
        cycles.append(ranks_result([p for p, _ in cycle], [r for _, r in cycle]))
    return RankCyclesResult(cycles=cycles, skipped=skipped, cut_short=cut)


def _uneven(counts: dict[int, int], cut: list[str]) -> UsageError:
    """The refusal where the ranks hold different numbers of cycles, naming the traces left
    out as cut short (a rank short of a cycle for them)."""
    held = ", ".join(f"rank {rank} {n}" for rank, n in counts.items())
    cut_words = f", and cut short: {first_few([str(p) for p in cut], 3)}" if cut else ""
    return UsageError(f"the ranks hold different numbers of profiler cycles ({held}; traces with "
                      f"nothing profiled left out{cut_words}): give the traces of whole cycles, "
                      "or one cycle's")


def _first_step(r: RankResult) -> float:
    """The number of the first ``ProfilerStep#N`` a rank's cycle holds (inf: none)."""
    numbers = [int(m.group(1)) for s in r.steps if (m := STEP_NAME.match(s.step))]
    return min(numbers) if numbers else math.inf
