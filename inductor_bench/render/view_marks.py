"""The marks before a view's group % peak (``~`` latency-bound, ``^`` in cache, ``!`` above the
compute ceiling) and the notes under the views by module, line and op that say what they mean."""

from __future__ import annotations

from ..core.results import BreakdownResult, GraphResult, KernelStat
from .roofline import PCT_HEADER, op_calls_cell

SHORT_GROUP = (f" {PCT_HEADER} marked ~: the time-weighted % of peak of the group's latency-bound kernels "
               "(too short to reach a limit), shown where none of its kernels' % is a distance to a limit: "
               "like theirs, it says how short they are, not how far from a limit.")
CACHED_GROUP = (f" {PCT_HEADER} marked ^: the time-weighted % of the DRAM ceiling of the group's in-cache "
                "kernels (memory-bound above that ceiling, their data served from a cache it does not "
                "bound), shown where none of its kernels' % is a distance to a limit: like theirs, it says "
                "how far past that ceiling a cache took them, not how far from a limit.")
BOTH_GROUP = (f" A {PCT_HEADER} of two figures (~ and ^): the group has kernels of both kinds, the one that "
              "holds more of its time first.")
LOW_GROUP = (f" {PCT_HEADER} marked !: the figure takes in a compute-bound kernel above the measured "
             "compute ceiling (the roofline section's warning says why), so it is held against a ceiling "
             "that kernel beat, not one it could not pass.")
GROUP_MARKS = {"~": SHORT_GROUP, "^": CACHED_GROUP, "!": LOW_GROUP}  # a group % peak's mark -> what it is


def cell_marks(cell: str) -> str:
    """The marks a group's % peak cell holds (``~``, ``^``, both: ``~^``; ``!``), in that order."""
    return "".join(m for m in GROUP_MARKS if m in cell)


def marks_note(marks: set[str]) -> str:
    """What each mark shown before a group's % peak is, and a cell of both marks."""
    shown = "".join(marks)
    return ("".join(words for m, words in GROUP_MARKS.items() if m in shown)
            + (BOTH_GROUP if any(len(m.strip("!")) > 1 for m in marks) else ""))


OP_CALLS = (f" {PCT_HEADER} of an extern op called at several places: its calls' time-weighted %, each call "
            "judged on its own (the roofline section lists them), latency-bound and in-cache calls left out, "
            "as the views by module and line weigh a group")
# where none of its calls' % is a distance to a limit: the figures of which calls its cell shows
OP_PARTS = {"~": "of its latency-bound calls (~)", "^": "of its in-cache calls (^)"}


def op_pct_note(r: BreakdownResult, rows: list[tuple[GraphResult, KernelStat]]) -> str:
    """What the op view's % peak of an extern op called at several places is, of the rows shown
    (``op_calls_cell``): its marked figures and a cell of two said only where one is shown."""
    marks = {cell_marks(cell) for g, k in rows if (cell := op_calls_cell(r, g, k)) is not None}
    if not marks:
        return ""
    parts = [words for m, words in OP_PARTS.items() if any(m in x for x in marks)]
    both = ", the one that holds more of its time first" if any(len(m.strip("!")) > 1 for m in marks) else ""
    where = (f"; where none is a distance to a limit, the time-weighted % {' and '.join(parts)}{both}"
             if parts else "")
    return OP_CALLS + where + "." + (LOW_GROUP if any("!" in m for m in marks) else "")
