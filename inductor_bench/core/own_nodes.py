"""Which FX nodes each scheduler operation of a lowering record really computes (pure; no torch).

While Inductor lowers an FX node, everything it makes gets the origins of that node **and**
of each input of the node that is not a realized buffer yet (``gather_origins`` in
``torch/_inductor/utils.py``, applied in ``GraphLowering.run_node``): an input that is still a
pointwise expression, or a view, carries the origins of everything upstream of it back to the
last realized buffer. An extern call realizes such an input only for itself, so its own
output, and whatever its lowering makes (the bias add of a frozen ``mkl._mkl_linear``, fused
into the next kernel), take all of them; the next extern call after that kernel takes those
again, and so on: the origins pile up. In a frozen MLP the third linear's bias-and-GELU kernel
lists every node of the graph before it, the first linear's included, and so do Inductor's
own ``# Topologically Sorted Source Nodes`` comment and the kernel's name
(``cpp_fused_addmm_gelu_native_layer_norm_2`` does no layer norm).

Two rules take back what piled up, and nothing else:

- a generated kernel's origins lose those of every earlier generated kernel whose origins
  they hold **all of and more**. A kernel that really recomputes a producer holds only the
  unrealized producer's nodes, never a whole earlier kernel's: that kernel's output is a
  realized buffer, which consumers read rather than compute again. Equal origins (one node
  lowered to several kernels: a split reduction) are left alone;
- an extern call's own nodes (those that run its op) lose the nodes an earlier extern call
  of the record already ran: one FX node is one extern call. Where nothing would be left (one
  node lowered to several extern calls) it keeps them all. An extern call whose recorded node
  is none of its origins runs its origins: CPU freezing's in-place fused convolution
  (``mkldnn._convolution_pointwise_.binary``, which adds into the residual's buffer) makes
  itself the node of the operation that wrote that buffer, the stem's convolution.
"""

from __future__ import annotations

from typing import Any


def own_origins(ops: list[dict[str, Any]]) -> list[list[str]]:
    """Per operation of the record (in its order), its origins less those piled up.

    Each operation's origins are a bit mask over the record's nodes, so that "holds all of
    an earlier kernel's and more" is two integer operations, and only the kernels whose first
    node it holds are asked: a thousand operations whose origins pile up all the way take about
    a second (comparing sets of every pair took half a minute), three thousand that do not a
    few hundredths."""
    bit: dict[str, int] = {}
    masks = [_mask(op.get("origins") or [], bit) for op in ops]
    by_first: dict[str, list[int]] = {}  # a kernel under its first node: one it holds must hold that
    out: list[list[str]] = []
    for k, op in enumerate(ops):
        names, mine, drop = op.get("origins") or [], masks[k], 0
        for j in (j for n in names for j in by_first.get(n, ())):
            if masks[j] != mine and not masks[j] & ~mine:
                drop |= masks[j]
        out.append([n for n in names if not (drop >> bit[n]) & 1])
        if not op.get("extern") and names:
            by_first.setdefault(names[0], []).append(k)
    return out


def _mask(names: list[str], bit: dict[str, int]) -> int:
    m = 0
    for n in names:
        m |= 1 << bit.setdefault(n, len(bit))
    return m


def own_extern_nodes(ops: list[dict[str, Any]]) -> list[list[str]]:
    """Per operation, the nodes its extern call runs (empty for a generated kernel)."""
    ran: set[str] = set()
    out: list[list[str]] = []
    for op in ops:
        if not op.get("extern"):
            out.append([])
            continue
        names = list(op.get("nodes") or op.get("origins") or [])
        if op.get("origins") and not set(names) & set(op["origins"]):
            names = list(op["origins"])  # its node was taken over by a later in-place op (below)
        mine = [n for n in names if n not in ran] or names
        ran |= set(mine)
        out.append(mine)
    return out
