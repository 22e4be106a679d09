"""diff's section on how a change moved each kernel toward its limit: the kernels' % of peak on
both sides, against ceilings that may have been measured apart."""

from __future__ import annotations

from collections.abc import Callable

from ..core.ceilings import Ceilings
from ..core.devices import without_threads
from ..core.diff import KernelDiff, SectionDiff
from ..core.diff_records import CallMove
from .doc import Doc
from .format import ms_precise, pct, points_between
from .roofline import figures_words
from .roofline_marks import LOW_CEILING
from .roofline_step import step_marks_note


def roofline_block(s: SectionDiff, top: int, doc: Doc, name: Callable[[Doc, str], str]) -> None:
    """The kernels with a % of peak on both sides that is a distance to their limit (an extern
    op as each of its calls paired with the same call on the other side), the longest in head
    first: how the change moved each toward it."""
    moves = [m for k in s.kernels for m in (k.calls or [k])]
    both = [k for k in moves if k.base_pct is not None and k.head_pct is not None]
    ks = [k for k in both if not k.no_distance]
    if s.roofline_ceilings is not None:
        doc.paragraph(ceilings_note(*s.roofline_ceilings))
    # what the summary row's marks say, and the table's ! too: a side's step takes those kernels in
    if marked := step_marks_note(list(s.roofline_sides or ())):
        doc.paragraph(marked)
    if ks:
        ks = sorted(ks, key=lambda k: -k.head_ms)
        rows = [[k.graph, name(doc, k.name) + _call_words(k), ms_precise(k.head_ms), _pct(k, "base"),
                 _pct(k, "head"), points_between(k.base_pct, k.head_pct)] for k in ks[:top]]
        more = f" (top {top} of {len(ks)})" if len(ks) > top else f" ({len(ks)})"
        doc.captioned(doc.strong("Toward the limit: % of peak, base and head" + more),
                      doc.table_text(rows, ["graph", "kernel", "head ms", "base % peak", "head % peak",
                                            "moved"]))
    if reshaped := [m for m in ks[:top] if isinstance(m, CallMove) and m.head_shapes is not None]:
        doc.paragraph("Shapes changed: these calls are the same calls of the model (the same op, module "
                      "and source line), at other sizes; each side's % is against its limit at its own "
                      "sizes, so the move is one toward the limit, but its time is not the same work's: "
                      + "; ".join(f"{m.graph} {m.name}: ({', '.join(m.base_shapes or ['-'])}) in base, "
                                  f"({', '.join(m.head_shapes)}) in head" for m in reshaped))
    if one_side := [k for k in s.kernels if k.calls and k.calls_one_side]:
        doc.paragraph("Calls on one side only (made from a module and source line the other side "
                      "called the op from fewer times, or never), not in the table: "
                      + "; ".join(f"{k.graph} {k.name} {k.calls_one_side}" for k in one_side))
    # the rows of the table alone: an op whose % is no distance to a limit is counted below it
    if unpaired := [k for k in ks if isinstance(k, KernelDiff) and k.calls_unpaired]:
        doc.paragraph("Each call of an extern op is its own row where both sides made the same calls; "
                      "these are one row, the op's calls together, as their calls differ: "
                      + "; ".join(f"{k.graph} {k.name} ({k.calls_unpaired})" for k in unpaired))
    if left := len(both) - len(ks):
        counts = _no_distance_counts(both)
        why = "; ".join(WHY[reason] for reason in WHY if any(key.startswith(reason) for key in counts))
        doc.paragraph(f"{left} kernel(s) with a % of peak on both sides are not moves toward a limit "
                      f"({', '.join(f'{n} {key}' for key, n in counts.items())}): {why}")


def _pct(k: KernelDiff | CallMove, side: str) -> str:
    """A side's % peak, ``!`` before it where it takes in a kernel above the compute ceiling, as
    breakdown's tables mark it."""
    mark = LOW_CEILING if side in k.above_ceiling else ""
    return mark + pct(k.base_pct if side == "base" else k.head_pct)


def _call_words(k: KernelDiff | CallMove) -> str:
    """`` (#2 in base, shapes changed)``: a paired call that base's report names otherwise, or
    whose inputs changed size; nothing for the others."""
    if not isinstance(k, CallMove):
        return ""
    words = ([f"{k.base_name.rsplit(' ', 1)[-1]} in base"] if k.base_name else []) + (
        ["shapes changed"] if k.head_shapes is not None else [])
    return f" ({', '.join(words)})" if words else ""


def ceilings_note(base: Ceilings, head: Ceilings, shared: Ceilings | None) -> str:
    """How the two sides' kernels are held against ceilings that were measured apart."""
    if shared is None:
        return (f"% of peak: {_apart(base, head)} ({_side_words(base, head)}; {_side_words(head, base)}), "
                "each held against its own ceilings")
    return (f"% of peak: the two runs measured this device's ceilings apart (base: {figures_words(base)}; "
            f"head: {figures_words(head)}); both are held against the higher of each figure "
            f"({figures_words(shared)}), so a move is the kernel's, not the measurement's")


def _apart(base: Ceilings, head: Ceilings) -> str:
    """Why the two sides keep their own ceilings: another device, or the same one run with
    another number of host threads (a CPU's ceilings scale with the threads; a host's name says
    its threads, which are no other device)."""
    if without_threads(base.device_name) == without_threads(head.device_name):
        return "base and head ran on this device with different numbers of threads"
    return "base and head ran on different devices"


def _side_words(c: Ceilings, other: Ceilings) -> str:
    """One side's ceilings, named by what tells them from the other side's."""
    who = c.device_name if c.device_name != other.device_name else f"{c.threads} thread(s)"
    return f"{who}: {figures_words(c)}"


# why a % that ``core/ceilings.no_distance`` names is no distance to a limit
WHY = {
    "latency-bound": "a latency-bound kernel's % says how short it is",
    "in cache": "one above the DRAM ceiling is served from a cache, which that ceiling does not bound",
}


def _no_distance_counts(ks: list[KernelDiff | CallMove]) -> dict[str, int]:
    """("in cache in head" -> how many kernels), each reason and side as the records name them."""
    counts: dict[str, int] = {}
    for k in ks:
        for key in filter(None, k.no_distance.split(", ")):
            counts[key] = counts.get(key, 0) + 1
    return counts
