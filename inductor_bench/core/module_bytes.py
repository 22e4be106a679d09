"""A fused kernel's modules in the order of the bytes they write, most first (pure; no torch).

A C++ kernel of a resnet18 inference graph applies ``layer4.0.bn1`` and its ReLU (six FX
nodes, 8 KB written at batch 2 and 64x64) and copies ``layer4.0.conv2``'s weight into
channels-last (one node, 9.4 MB), every call. Counted by nodes, its source cell read
``layer4.0.bn1, ...``: the batch norm took the blame for a convolution's weight copy. Here each
buffer the kernel writes counts its bytes to the modules of the operation that writes it, and
the modules most bytes are written for come first; the nodes' order stays among modules
written for alike, and where the compiled module does not give a buffer's size. Which modules
the kernel holds is unchanged: only their order, the first of which the source cell names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from .callsites import Call
from .modparse import ModuleInfo
from .module_calls import module_calls
from .own_nodes import own_origins
from .sources import Origin
from .unplaced import CallSizes, call_bytes


def heaviest_first(
    origins: dict[int, Origin], calls: list[Call], record: dict[str, Any], text: str, module: ModuleInfo,
    modules_of: Callable[[list[str]], list[str]], *, sizes: CallSizes | None = None,
    own: list[list[str]] | None = None,
) -> dict[int, Origin]:
    """``origins`` (call position -> Origin) with each generated kernel's modules ordered by the
    bytes written for them (``written_for``), most first; ``modules_of`` gives the module paths
    of some FX nodes of the record; ``sizes`` and ``own``: ``call_bytes`` of the module and
    ``own_origins`` of the record, where the caller has read them."""
    fused = [i for i, c in enumerate(calls)
             if not c.extern and (o := origins.get(i)) is not None and len(o.modules) > 1]
    if not fused:
        return origins
    out = dict(origins)
    weights = written_for(calls, record, text, module, fused, modules_of, sizes=sizes, own=own)
    for i, weight in weights.items():
        o = origins[i]
        order = sorted(o.modules, key=lambda m: -weight.get(m, 0))  # stable: ties keep the nodes' order
        out[i] = Origin(o.nodes, o.lines, order, o.missing, o.recomputed)
    return out


def written_for(
    calls: list[Call], record: dict[str, Any], text: str, module: ModuleInfo, among: list[int],
    modules_of: Callable[[list[str]], list[str]], *, sizes: CallSizes | None = None,
    own: list[list[str]] | None = None,
) -> dict[int, Counter[str]]:
    """Call position (of ``among``) -> module path -> the bytes of the buffers it writes whose
    first writing operation has a node in that module (a buffer counts once per module), for
    the calls whose every written buffer's size the module gives."""
    ops = record.get("ops") or []
    first: dict[str, int] = {}  # buffer -> the first operation writing it
    for k, op in enumerate(ops):
        for b in op.get("written", []):
            first.setdefault(b, k)
    own = own if own is not None else own_origins(ops)
    mods: dict[int, list[str]] = {}
    sizes = sizes if sizes is not None else call_bytes(calls, module_calls(text, module))
    out: dict[int, Counter[str]] = {}
    for i in among:
        written = [b for b in dict.fromkeys(calls[i].written or []) if b in first]
        size = [sizes.get(i, {}).get(b) for b in written]
        if not written or any(n is None for n in size):
            continue
        weight: Counter[str] = Counter()
        for b, n in zip(written, size, strict=True):
            k = first[b]
            for m in mods.setdefault(k, modules_of(own[k])):
                weight[m] += n or 0
        out[i] = weight
    return out
