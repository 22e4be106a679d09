"""Why each iteration a graph's figures leave out was left out, from the saved result alone.

The policy (``core/steady.py``) leaves an iteration out when its wall is over the wall limit,
when the worker's clock found it slow, or when one of its parts was (``core/parts.py``, the
parts the analysis judged by): a kernel's time in it, one call's time of a kernel or extern op
called at several places (a call site, named as the kernel tables name it: ``aten::addmm #1``),
or its idle time between kernels (``idle``). The parts are judged again here from their saved
samples by the same rule (``parts_over``); an iteration is put down to the part furthest over
its own median, a call rather than its op's sum where both are over. Pure Python; no torch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from .parts import IDLE, iteration_parts
from .results import GraphResult
from .steady import limit_of, parts_over, steady


@dataclass
class LeftOut:
    """One graph's left-out iterations by cause: the three sets add up to ``left_out``."""

    wall: set[int] = field(default_factory=set)  # over the wall limit
    clock: set[int] = field(default_factory=set)  # the rest the worker's clock found slow
    parts: set[int] = field(default_factory=set)  # the rest: left out by one of their parts
    # the part each of ``parts`` is put down to, and how many; most first, then by name
    by_part: list[tuple[str, int]] = field(default_factory=list)


def left_out_why(g: GraphResult) -> LeftOut:
    """Why each of ``g.left_out`` was left out (``LeftOut``)."""
    out = set(g.left_out)
    walls = g.wall_samples_ms
    wall = {i for i in out if g.limit_ms is not None and walls[i] > g.limit_ms}
    clock = set()
    if g.clock_samples_ms and len(g.clock_samples_ms) == len(walls):
        clock = (set(steady(g.clock_samples_ms, limit_of).left_out) & out) - wall
    rest = out - wall - clock
    parts = iteration_parts(g)  # those the analysis judged by
    over = parts_over(walls, parts.series, limit_of) if rest else {}
    blamed = Counter(parts.names[_blame(over[i], parts.parent)] for i in rest if i in over)
    by_part = sorted(blamed.items(), key=lambda kv: (-kv[1], kv[0]))
    return LeftOut(wall=wall, clock=clock, parts=rest, by_part=by_part)


def _blame(excess: dict[int, float], parent: dict[int, int]) -> int:
    """The part an iteration is put down to: the one furthest over its median; where that is a
    kernel one of whose calls is over too, that call (the furthest over of them)."""
    top = max(excess, key=lambda j: (excess[j], -j))
    calls = [j for j in excess if parent.get(j) == top]
    return max(calls, key=lambda j: (excess[j], -j)) if calls else top


def describe(lo: LeftOut, shown: int = 3, code: Callable[[str], str] = str) -> str:
    """`` (aten::addmm #1 4, cpp_fused_gelu_1 3, idle 2)``: the parts, most frequent first, at
    most ``shown`` named, each name as ``code`` writes it (a document's code span: a bare
    ``#1`` in markdown links an issue); nothing where none was found."""
    if not lo.by_part:
        return ""
    named = [f"{name if name == IDLE else code(name)} {n}" for name, n in lo.by_part[:shown]]
    more = len(lo.by_part) - shown
    return " (" + ", ".join(named) + (f", +{more} more" if more > 0 else "") + ")"
