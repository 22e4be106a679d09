"""The step's % of peak in compare's and diff's rows: each side's or column's time-weighted %,
marked as the views mark a group's (``roofline.group_roof_cell``), and what its marks say."""

from __future__ import annotations

from ..core.ceilings import ABOVE_CEILING_PCT, GroupRoof, group_roof
from ..core.results import BreakdownResult
from ..core.roofline import category_far_below_ms, ceilings_of, has_counts, step_members
from . import format as fmt
from .roofline import FAR_HEADER, group_roof_cell, shows_roofline, weighted_cell
from .roofline_marks import LOW_CEILING, MARKS


def roofline_rows(breakdowns: list[BreakdownResult | None]) -> list[list[str]]:
    """Rows of the compare table, one cell per column: the time-weighted % of peak (marked as the
    views mark a group's: ``step_roof_cell``) and the share of kernel time under
    ``FAR_BELOW_PCT`` of its limit; none when no column has ceilings."""
    shown = [b if b is not None and shows_roofline(b) and has_counts(b) else None for b in breakdowns]
    if not any(shown):
        return []
    weighted = [step_roof_cell(g) if g is not None else fmt.DASH for g in step_roofs(shown)]
    far = [fmt.pct(fmt.share(sum(category_far_below_ms(b).values()), b.totals().kernel_ms))
           if b is not None else fmt.DASH for b in shown]
    return [[f"% of peak (time-weighted{_loaded_words(shown)})", *weighted],
            [f"kernel time {FAR_HEADER}", *far]]


def _loaded_words(shown: list[BreakdownResult | None]) -> str:
    """What the row's name adds where a column's ceilings were measured beside other work (its
    breakdown warns of it): they may be low, so its % may read high."""
    return loaded_words(any(b is not None and (c := ceilings_of(b)) is not None and c.load for b in shown))


def loaded_words(loaded: bool) -> str:
    """What a % of peak row's name adds where ceilings it holds were measured under load."""
    return "; ceilings measured under load: may read high" if loaded else ""


def step_roofs(breakdowns: list[BreakdownResult | None]) -> list[GroupRoof | None]:
    """Each column's step figures (``group_roof`` of its ``step_members``), where it has ceilings
    and counts."""
    return [group_roof(step_members(b)) if b is not None and shows_roofline(b) and has_counts(b) else None
            for b in breakdowns]


# a mark of the step's % of peak (compare's and diff's rows) -> what it says
STEP_MARKS = {
    LOW_CEILING: (f"! = the figure takes in a compute-bound kernel above {ABOVE_CEILING_PCT:g}% of the "
                  "measured compute ceiling, a ceiling measured low (the run's breakdown warns of it), so it "
                  "is held against a ceiling that kernel beat"),
    "~": ("~ = no kernel's % is a distance to a limit: the time-weighted % of the latency-bound kernels "
          "(too short to reach one)"),
    "^": ("^ = no kernel's % is a distance to a limit: the time-weighted % of the DRAM ceiling of the "
          "in-cache kernels (above it, served from a cache it does not bound)"),
}


def step_marks_note(roofs: list[GroupRoof | None]) -> str:
    """What the marks on the step's % of peak shown mean, as the views mark a group's; "" where
    none is marked."""
    marks = ({LOW_CEILING} if any(g and g.above_ceiling for g in roofs) else set()) | {
        MARKS[why] for g in roofs if g for why, _, _ in g.parts}
    if not marks:
        return ""
    both = any(g and len(g.parts) > 1 for g in roofs)
    return ("% of peak marked as breakdown's tables mark it: "
            + "; ".join(words for m, words in STEP_MARKS.items() if m in marks)
            + ("; two figures: the step has kernels of both kinds, the one with more of its time first"
               if both else ""))


def step_roof_cell(g: GroupRoof) -> str:
    """The step's time-weighted % of peak in compare's and diff's rows, marked as the views' total
    row marks it (``group_roof_cell``); where kernels ran and none has a %, why there is none."""
    return group_roof_cell(g) if g.pct is not None or g.parts else weighted_cell(None, g.share)
