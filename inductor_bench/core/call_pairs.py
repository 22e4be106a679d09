"""Which call of an extern op in one run is which call in the other, for diff's moves toward
the limit (``roofline.roofline_moves``). Pure; no torch.

A call is known by where the model made it, not by its index in the compiled module (a layer
added before it shifts every index after): the same op, from the same module path and source
line (its function and code, not its line number, which an edit above it moves), the n-th such
call on both sides (where one side made more from there, those most alike in shape). A call
without a recorded origin is known by its position among the op's calls without one. Of the
calls left, one at the same index with the same input shapes on both sides is the same call
still (its line was edited). The shapes of a pair may differ (a
hidden size of 256 made 512): its % of peak, each side against its limit at its own sizes,
is still a move toward the limit; its time is not the same work's, and the row says so.

A kernel with no extern call recorded on either side (a generated kernel; an op of a run saved
before calls were) has no shapes of its own: where its graph's inputs changed size
(``GraphResult.input_shapes``, recorded on both sides) or, as many, their dtypes
(``input_dtypes``, where both sides recorded them), it is put down as changed as a whole, and
the section says how the graph's inputs differ (``inputs_changed``); an extern call records
its shapes but not its dtypes, so other dtypes mark it too.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TypeVar

from .ceilings import KernelRoof, beats_compute_ceiling, no_distance
from .diff_records import ADDED, REMOVED, CallMove, SectionDiff
from .graph_inputs import dtypes_known, inputs_difference
from .results import BreakdownResult, GraphResult, KernelStat
from .sizepoly import same_shape
from .sources import STRIDES_MARK, UNKNOWN_STRIDES, CallSite, shape_dims

K = TypeVar("K")


@dataclass
class Call:
    """One extern call of a run as ``roofline.judged_calls`` holds it against its limit."""

    mark: str  # `` #3``: its index among the module's extern calls
    stat: KernelStat
    roof: KernelRoof
    site: CallSite


def site_key(site: CallSite) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Where the model made the call: its module paths and its source lines (function, code;
    the line number where the code was not recorded)."""
    o = site.origin
    if o is None:
        return (), ()
    return tuple(o.modules), tuple((ln.function, ln.code.strip() or str(ln.line)) for ln in o.lines)


def pair_calls(base: list[Call], head: list[Call]) -> tuple[list[tuple[Call, Call]], list[Call], list[Call]]:
    """(the pairs in head's call order, base's calls left, head's calls left)."""
    bg, hg = _by_site(base), _by_site(head)
    pairs = [p for key in hg if key in bg for p in _pair_site(bg[key], hg[key])]
    taken_b, taken_h = {id(b) for b, _ in pairs}, {id(h) for _, h in pairs}
    left_b = {c.mark: c for c in base if id(c) not in taken_b}
    for h in head:
        b = left_b.get(h.mark)
        if id(h) not in taken_h and b is not None and same_inputs(b, h):
            pairs.append((b, h))
            del left_b[h.mark]
            taken_h.add(id(h))
    pairs.sort(key=lambda p: p[1].site.index)
    left_h = [h for h in head if id(h) not in taken_h]
    return pairs, sorted(left_b.values(), key=lambda c: c.site.index), left_h


def _by_site(calls: list[Call]) -> dict[object, list[Call]]:
    """The calls by their site key, each list in call order."""
    out: dict[object, list[Call]] = {}
    for c in sorted(calls, key=lambda c: c.site.index):
        out.setdefault(site_key(c.site), []).append(c)
    return out


def _pair_site(base: list[Call], head: list[Call]) -> list[tuple[Call, Call]]:
    """One place's calls: the n-th with the n-th where both sides made as many; else each call
    of the side with fewer with the other side's call most alike in shape, the first of those
    alike (a linear's backward adds its input's gradient once a layer before it needs one:
    64x1024 @ 1024x256 beside the weight's 1024x64 @ 64x256, which base's 512x64 @ 64x256 is)."""
    if len(base) == len(head):
        return list(zip(base, head, strict=True))
    few, many = (base, head) if len(base) < len(head) else (head, base)
    free = list(many)
    out = []
    for c in few:
        best = max(free, key=lambda m: (_alike(c.site.shapes, m.site.shapes), -free.index(m)))
        free.remove(best)
        out.append((c, best) if few is base else (best, c))
    return out


def _alike(a: list[str], b: list[str]) -> int:
    """How many dimensions two calls' input shapes share, place by place (a ``Max(3, s0)`` one
    dimension: ``sources.shape_dims``)."""
    return sum(x == y for sa, sb in zip(a, b, strict=False)
               for x, y in zip(shape_dims(sa), shape_dims(sb), strict=False))


def call_move(graph: str, op: str, b: Call, h: Call, weight: float) -> CallMove:
    """A pair as its row: named as head's report names the call, with base's mark where it
    differs and both sides' input shapes where they differ."""
    shapes = (b.site.shapes, h.site.shapes) if not same_inputs(b, h) else (None, None)
    return CallMove(graph, op + h.mark, weight * h.stat.ms, b.roof.pct, h.roof.pct,
                    ", ".join(f"{why} in {side}" for side, r in (("base", b.roof), ("head", h.roof))
                              if (why := no_distance(r))),
                    base_name=op + b.mark if b.mark != h.mark else None,
                    base_shapes=shapes[0], head_shapes=shapes[1],
                    above_ceiling=[side for side, r in (("base", b.roof), ("head", h.roof))
                                   if beats_compute_ceiling(r)])


def one_side_words(base_left: list[Call], head_left: list[Call]) -> str:
    """``#5 in head only``: the calls with none to pair on the other side (made from a place
    it called the op from fewer times, or never)."""
    return "; ".join(f"{', '.join(c.mark.strip() for c in left)} in {side} only"
                     for side, left in (("base", base_left), ("head", head_left)) if left)


def strides_alike(base: dict[K, list[Call]],
                  head: dict[K, list[Call]]) -> tuple[dict[K, list[Call]], dict[K, list[Call]]]:
    """Both sides' calls, their inputs' strides (``sources.call_shapes``) left out of both where
    one side recorded none at all: a run saved before strides were, or whose modules came from a
    cache recorded then, says nothing of them, and its transposed inputs are no change."""
    def any_strides(calls: dict[K, list[Call]]) -> bool:
        return any(STRIDES_MARK in s for cs in calls.values() for c in cs for s in c.site.shapes)

    def shapes_only(calls: dict[K, list[Call]]) -> dict[K, list[Call]]:
        return {k: [_shapes_only(c) for c in cs] for k, cs in calls.items()}

    if any_strides(base) == any_strides(head):
        return base, head
    return shapes_only(base), shapes_only(head)


def same_inputs(b: Call, h: Call) -> bool:
    """Whether a pair's inputs are alike: their shapes, and their strides where both sides know
    them; a call whose strides are not known (``sources.UNKNOWN_STRIDES``: a module from a cache
    recorded without them) is compared by its shapes alone, never as strides that differ. A size
    of dynamic shapes is compared as a size: the record's ``2*s27 + 2`` is the ``2 + 2*s27`` a
    stride read back from the module's text is (``sizepoly.same_shape``)."""
    if any(UNKNOWN_STRIDES in s for c in (b, h) for s in c.site.shapes):
        b, h = _shapes_only(b), _shapes_only(h)
    return len(b.site.shapes) == len(h.site.shapes) and all(
        same_shape(x, y) for x, y in zip(b.site.shapes, h.site.shapes, strict=True))


def _shapes_only(c: Call) -> Call:
    return replace(c, site=replace(c.site, shapes=[s.split(STRIDES_MARK)[0] for s in c.site.shapes]))


def inputs_changed(section: SectionDiff, base: BreakdownResult, head: BreakdownResult) -> None:
    """Each paired kernel without extern calls on either side whose graph's inputs changed (in
    number, shape or dtype), and each extern op of a graph whose inputs changed dtype: its
    ``graph_inputs_changed``, its time not the same work's; and the section's ``graph_inputs``,
    how that graph's inputs differ."""
    bg, hg = ({g.id: g for g in r.graphs} for r in (base, head))
    for k in section.kernels:
        if k.status in (ADDED, REMOVED) or k.other_work:
            continue
        b, h = bg.get(k.base_graph or k.graph), hg.get(k.graph)
        if b is None or h is None or not (b.input_shapes and h.input_shapes):
            continue
        how = inputs_difference(b.input_shapes, h.input_shapes, b.input_dtypes, h.input_dtypes)
        # an extern call records its shapes, not its dtypes: other dtypes mark it too
        extern = _calls_made(b, k.base_name or k.name) or _calls_made(h, k.name)
        if how and (not extern or _other_dtypes(b, h)):
            k.graph_inputs_changed = True
            section.graph_inputs[k.graph] = how


def _other_dtypes(b: GraphResult, h: GraphResult) -> bool:
    """Whether the two graphs' inputs are as many, and some of another dtype."""
    return (len(b.input_shapes) == len(h.input_shapes) and dtypes_known(b.input_shapes, b.input_dtypes)
            and dtypes_known(h.input_shapes, h.input_dtypes) and b.input_dtypes != h.input_dtypes)


def _calls_made(g: GraphResult, name: str) -> bool:
    return any(s.kernel == name and s.extern for s in g.sites)
