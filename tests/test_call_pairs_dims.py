"""diff pairs one place's calls by the dimensions their input shapes share, a dimension that
is a maximum of dynamic sizes (``Max(3, s0)``) read whole, not cut at its ``x`` (hand-built
calls, synthetic)."""

from __future__ import annotations

from inductor_bench.core.call_pairs import Call, pair_calls
from inductor_bench.core.sources import CallSite


def _call(index: int, shapes: list[str]) -> Call:
    site = CallSite("aten::mm", index, "extern_kernels.mm", 1.0, 0.1, shapes=shapes)
    return Call(f" #{index}", None, None, site)  # type: ignore[arg-type]  # pairing reads the site


def test_a_maximum_is_one_dimension_when_calls_are_paired_by_shape():
    """Base's one call at ``Max(3, s0)x4 @ 4x8``; head's two at one place: ``Max(5, s1)x7 @ 7x8``
    (one dimension in common: the second input's 8) and ``9x4 @ 4x8`` (three: the first input's
    4 at place 2, and the second input's 4 and 8). Base's call pairs with head's second. Cut at
    each ``x``, ``Max(...)`` gave the first a shared ``Ma`` (2) and shifted the second's first
    input out of place (2), and the tie went to the first."""
    base = [_call(0, ["Max(3, s0)x4", "4x8"])]
    head = [_call(0, ["Max(5, s1)x7", "7x8"]), _call(1, ["9x4", "4x8"])]
    pairs, left_base, left_head = pair_calls(base, head)
    assert [(b.mark, h.mark) for b, h in pairs] == [(" #0", " #1")]
    assert left_base == [] and [h.mark for h in left_head] == [" #0"]
