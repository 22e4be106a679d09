"""Whether a kernel of one run and a kernel of another are one code (pure; no torch).

Two runs' times of one kernel come from two processes, one after the other: where both ran one
code, what differs is the processes (the machine's state, other work), never the kernel, and
no verdict says faster or slower. A kernel is one code when both compiled modules define it
with one source, less its own name (a C++ kernel names itself only in its profiler range,
``graph_0_cpp_fused_sum_2``, so one renamed by its counter alone counts too; where it includes a
header by its path in the cache, the header's name counts, not the cache's), or, for
an extern op (``aten::addmm``: no source of its own in the module), when both graphs call it as
often on the same counted bytes and FLOPs. Where a module is not there to read, nothing is
claimed.
"""

from __future__ import annotations

import re
from typing import Any

from .compiled_from import cache_neutral
from .modparse import parse_module
from .results import BreakdownResult, KernelStat


class RunKernels:
    """One run's kernels: the sources its modules define (graph id -> module text given) and
    its measured kernel stats, by graph and name."""

    def __init__(self, result: BreakdownResult, module_texts: dict[str, str]) -> None:
        self.sources = {gid: {n: cache_neutral(k.source) for n, k in parse_module(text).kernels.items()}
                        for gid, text in module_texts.items()}
        self.stats = {(g.id, k.name): k for g in result.measured() for k in g.kernels}

    def get(self, graph: str, name: str) -> tuple[str | None, KernelStat | None] | None:
        """(its source, None for an extern op; its stats), None where its module was not read."""
        if graph not in self.sources:
            return None
        return self.sources[graph].get(name), self.stats.get((graph, name))


def one_code(base: RunKernels, base_at: tuple[str, str], head: RunKernels, head_at: tuple[str, str]) -> bool:
    """Whether the kernel at (graph, name) of base and that of head are one code."""
    b, h = base.get(*base_at), head.get(*head_at)
    if b is None or h is None:
        return False
    (bs, bk), (hs, hk) = b, h
    if bs is not None or hs is not None:
        return bool(bs) and bool(hs) and _unnamed(bs, base_at[1]) == _unnamed(hs, head_at[1])
    return base_at[1] == head_at[1] and _same_work(bk, hk)


def _unnamed(source: str, name: str) -> str:
    """A kernel's source with its own name (not a longer one: ``cpp_fused_sum_21`` for
    ``cpp_fused_sum_2``) put out."""
    return re.sub(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![0-9])", "<kernel>", source)


def _same_work(b: Any, t: Any) -> bool:
    """Two extern ops' stats: called as often, on the same counted bytes and FLOPs."""
    return (b is not None and t is not None and b.bytes is not None and b.flops is not None
            and (b.calls, b.bytes, b.flops) == (t.calls, t.bytes, t.flops))
