"""The charts of an ``analyze`` of several ranks: each rank's steps, their wall time split into
compute, exposed communication, other steps' work and idle (the straggler marked), and time by
category per rank in its typical step. The numbers are those of the tables beside them
(``render/ranks.py``)."""

from __future__ import annotations

from ..core.ranks import COMM, RanksResult, RankStep
from . import format as fmt
from .chart_model import Bar, Chart, Segment, Series
from .charts import category_segments

# (step, rank) bars drawn at most; with more, the first steps are drawn (the table has them all)
MAX_BARS = 40
# what a typical-step figure covers where every rank has steps
STEADY = "steady mean step"
# What a step's wall time is made of (they add up to it), by colour key: compute the busy
# colour, exposed communication the communication category's.
WALL_PARTS = {
    Series.BUSY: "compute",
    COMM: "exposed communication",
    Series.OTHER_WORK: "other steps' work",
    Series.IDLE: "idle",
}


def _parts(s: RankStep) -> list[float]:
    return [s.compute_ms, s.exposed_comm_ms, s.other_work_ms, s.idle_ms]


def _step_bar(s: RankStep, rank: int, straggler: bool) -> Bar:
    segments = [Segment(v, key, name) for (key, name), v in zip(WALL_PARTS.items(), _parts(s), strict=True)
                if v > 0]
    return Bar(
        f"{s.step} · rank {rank}",
        segments,
        note=f"wall {fmt.ms(s.wall_ms)} ms" + (" · straggler" if straggler else ""),
        tip=f"busy {fmt.ms(s.busy_ms)} ms · comm {fmt.ms(s.comm_ms)} ms, {fmt.ms(s.overlap_ms)} ms of it "
        "overlapped by compute",
    )


def ranks_steps(r: RanksResult, names: list[str]) -> Chart | None:
    """Each step (``names``, in order) on each rank, one bar whose length is its wall time."""
    shown = names[: max(1, MAX_BARS // max(len(r.ranks), 1))]
    late = {(g.step, g.rank) for g in r.stragglers if not g.tied}
    bars = [_step_bar(s, rank.rank, (name, rank.rank) in late)
            for name in shown for rank in r.ranks if (s := rank.step(name))]
    if not bars:
        return None
    drawn = {seg.series for b in bars for seg in b.segments}
    more = f" (the first {len(shown)} of {len(names)})" if len(shown) < len(names) else ""
    return Chart(
        f"Steps per rank{more}: where the wall time goes",
        "ms of step wall time",
        bars,
        note="compute + exposed communication + other steps' work + idle = the step's wall (the table "
        "above); straggler: the rank with the step's longest wall.",
        legend={key: name for key, name in WALL_PARTS.items() if key in drawn},
    )


def ranks_categories(per_rank: dict[str, dict[str, float]], scope: str) -> Chart | None:
    """Time by category per rank (its name as the table's rank cell gives it -> category -> ms)
    in ``scope``, as the table's heading says: each rank's typical step, or its whole trace."""
    bars = [Bar(f"rank {rank}", category_segments(cats), note=f"{fmt.ms(sum(cats.values()))} ms")
            for rank, cats in per_rank.items() if any(v > 0 for v in cats.values())]
    if not bars:
        return None
    return Chart(f"Time by category per rank ({scope})", "ms per step" if scope == STEADY else "ms", bars)
