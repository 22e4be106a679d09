"""Two results' kernels paired and judged one by one, and their categories: the rows of a diff's section.

Kernels are paired by ``match.py``; each kernel's figure is per step (weighed by its graph's
calls), as the step and the categories are, so that the kernels' changes add up to theirs.
Pure Python; no torch.
"""

from __future__ import annotations

from typing import Any

from .categories import order as category_order
from .diff_records import ADDED, FASTER, REMOVED, SLOWER, CategoryDiff, KernelDiff
from .match import KernelRef, match_kernels
from .results import BreakdownResult, GraphResult
from .stats import judge
from .summaries import Summary

Weights = dict[str, float]  # graph id -> its calls (``BreakdownResult.weights``)


def _kernel_change(b: KernelRef, h: KernelRef, how: str, min_rel: float,
                   w: tuple[Weights, Weights]) -> KernelDiff:
    ch = judge(_kernel_summary(b, w[0]), _kernel_summary(h, w[1]), min_rel)
    status = SLOWER if ch.slower else FASTER if ch.faster else ch.verdict
    return _row(
        h, status,
        base_ms=ch.base.ms,
        head_ms=ch.head.ms,
        base_name=b.kernel.name if b.kernel.name != h.kernel.name else None,
        base_graph=b.graph.id if b.graph.id != h.graph.id else None,
        matched_by=how,
        change=ch,
    )


def _lone_kernel(r: KernelRef, status: str, w: Weights) -> KernelDiff:
    ms = _kernel_summary(r, w).ms
    return _row(r, status, base_ms=ms if status == REMOVED else 0.0, head_ms=ms if status == ADDED else 0.0)


def _row(r: KernelRef, status: str, **figures: Any) -> KernelDiff:
    """The kernel's row, named as on its side ``r`` (the head's where both have it)."""
    return KernelDiff(status=status, graph=r.graph.id, name=r.kernel.name, category=r.kernel.category,
                      aten_ops=list(r.kernel.aten_ops), **figures)


def _kernel_summary(r: KernelRef, w: Weights) -> Summary:
    """The kernel's figure per step (or in the script), as the top kernels of its report: over
    its graph's steady iterations, times the graph's calls (1 where there is no weight)."""
    return r.graph.summary(r.kernel.samples_ms, r.kernel.ms).scaled(w.get(r.graph.id, 1.0))


def kernel_diffs(base: list[GraphResult], head: list[GraphResult], min_rel: float,
                 weights: tuple[Weights, Weights] = ({}, {})) -> list[KernelDiff]:
    """Every kernel of both sides, biggest absolute change first. ``weights`` (each side's
    ``BreakdownResult.weights``) weigh each kernel by its graph's calls, as the step and the
    categories are, so that the kernels' changes add up to theirs; without, per call."""
    pairs, removed, added = match_kernels(base, head)
    out = [_kernel_change(b, h, how, min_rel, weights) for b, h, how in pairs]
    out += [_lone_kernel(r, REMOVED, weights[0]) for r in removed]
    out += [_lone_kernel(r, ADDED, weights[1]) for r in added]
    return sorted(out, key=lambda k: (-abs(k.delta_ms), k.graph, k.name))


def category_diffs(base: BreakdownResult, head: BreakdownResult, min_rel: float) -> list[CategoryDiff]:
    bt, ht = base.totals(), head.totals()
    cats = sorted(set(bt.categories) | set(ht.categories), key=lambda c: (category_order(c), c))
    out = []
    for c in cats:
        ch = judge(base.kernel_summary(c), head.kernel_summary(c), min_rel)
        out.append(CategoryDiff(category=c, change=ch))
    return out
