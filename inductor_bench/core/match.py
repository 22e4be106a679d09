"""Kernels of two runs paired up, though kernel names move between runs; pure, no torch.

Kernels are matched first by (graph id, name); the rest, whose names moved (kernel counters
renumber, fused names change), by (graph role, origin ATen ops), then by (graph role,
category, name without its counter). Used by ``diff`` and by ``--autotune-top`` on CPU.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from .results import GraphResult, KernelStat


@dataclass(frozen=True)
class KernelRef:
    graph: GraphResult
    kernel: KernelStat


_COUNTER = re.compile(r"_(\d+)$")


def _counter(name: str) -> int:
    m = _COUNTER.search(name)
    return int(m.group(1)) if m else -1


def name_stem(name: str) -> str:
    """``cpp_fused_gelu_3`` -> ``cpp_fused_gelu``: the name without its kernel counter."""
    return _COUNTER.sub("", name)


def _by_name(r: KernelRef) -> Hashable:
    return (r.graph.id, r.kernel.name)


def _by_origin(r: KernelRef) -> Hashable | None:
    ops = tuple(sorted(set(r.kernel.aten_ops)))
    return (r.graph.role, ops) if ops else None


def _by_stem(r: KernelRef) -> Hashable:
    return (r.graph.role, r.kernel.category, name_stem(r.kernel.name))


# Stage name -> key; a kernel whose key is None takes no part in that stage.
MATCH_STAGES: tuple[tuple[str, Callable[[KernelRef], Hashable | None]], ...] = (
    ("name", _by_name),
    ("origin", _by_origin),
    ("name stem", _by_stem),
)


def _order(r: KernelRef) -> tuple[str, int, str]:
    # The counter follows the order Inductor generated the kernels in (topological order),
    # so equal keys pair up in program order.
    return (r.graph.id, _counter(r.kernel.name), r.kernel.name)


def _group(refs: list[KernelRef], key: Callable[[KernelRef], Hashable | None]):
    groups: dict[Hashable, list[KernelRef]] = {}
    for r in refs:
        k = key(r)
        if k is not None:
            groups.setdefault(k, []).append(r)
    return groups


def match_kernels(
    base: list[GraphResult], head: list[GraphResult]
) -> tuple[list[tuple[KernelRef, KernelRef, str]], list[KernelRef], list[KernelRef]]:
    """(matched pairs with the stage that matched them, removed, added)."""
    left = [KernelRef(g, k) for g in base for k in g.kernels]
    right = [KernelRef(g, k) for g in head for k in g.kernels]
    pairs: list[tuple[KernelRef, KernelRef, str]] = []
    for how, key in MATCH_STAGES:
        hgroups = _group(right, key)
        used_l: set[int] = set()
        used_r: set[int] = set()
        for k, bs in _group(left, key).items():
            hs = sorted(hgroups.get(k, []), key=_order)
            # unequal groups: the extra kernels stay for the next stage (or added/removed)
            for b, h in zip(sorted(bs, key=_order), hs, strict=False):
                pairs.append((b, h, how))
                used_l.add(id(b))
                used_r.add(id(h))
        left = [r for r in left if id(r) not in used_l]
        right = [r for r in right if id(r) not in used_r]
    return pairs, left, right
