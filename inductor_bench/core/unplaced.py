"""A generated kernel made mostly from no FX node, placed where its bytes are (pure; no torch).

Inductor's layout optimization copies graph inputs into the layout its kernels use (a
convolution's weights into channels-last, every training step): scheduler operations made
from no FX node. The scheduler fuses such copies with whatever else reads or writes nearby; in
a resnet18 training step, one C++ kernel copies 17 convolution weights and the input (44 MB) and
also bumps the 20 BatchNorms' ``num_batches_tracked`` (20 scalars). Its origins are then those
20 BatchNorm nodes alone, and every view charged the copy, 8.9% of that step, to them.

Where the buffers the kernel writes for operations with no FX node hold more bytes than those
it writes for operations with one, and those its nodes write are single values (counters), its
origin keeps its nodes but no line and no module: ``MOSTLY_UNPLACED`` says why, and the views
put it beside the kernels made from no node at all. A kernel whose nodes write tensors (a
BatchNorm's output and statistics, a ReLU's output) does their modules' work however many bytes
of copies beside it, and keeps their lines and modules: timm's resnet18 with 1000 classes fuses
11 of its 17 weight copies so, one of layer4's (9.4 MB) beside a BatchNorm and ReLU writing
24.6 kB in ``cpp_fused__native_batch_norm_legit_functional_copy__relu_14``. The sizes come
from the compiled module alone (``core/buffers.py``); where one is not known the origin is left
as it is. Where most of its bytes are convolutions' weights,
``core/weight_copies.weight_copy_origins`` then names it for that work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .buffers import CallArgs, Tensor
from .callsites import Call
from .modparse import ModuleInfo
from .module_calls import module_calls
from .sources import Origin

CallSizes = dict[int, dict[str, int | None]]  # call position -> buffer -> its bytes (None: unknown)

# the origin of a kernel made from no FX node at all
NO_NODE = "made from no FX node (it copies graph inputs into the layout the kernels use)"
MOSTLY_UNPLACED = ("made mostly from no FX node (it copies graph inputs into the layout the kernels "
                   "use; its nodes write fewer bytes)")


def mostly_unplaced(
    origins: dict[int, Origin], calls: list[Call], record: dict[str, Any], text: str, module: ModuleInfo,
    sizes: CallSizes | None = None,
) -> dict[int, Origin]:
    """``origins`` (call position -> Origin) with each generated kernel that writes more bytes
    for operations made from no FX node than for those made from some given no line and no
    module (see the module docstring); ``sizes``: ``call_bytes`` of the module, where read."""
    mixed = [i for i, c in enumerate(calls) if not c.extern and (o := origins.get(i)) is not None and o.nodes]
    out = dict(origins)
    weighed = placement_bytes(calls, record, text, module, mixed, sizes)
    heavier = [i for i, (unplaced, placed) in weighed.items() if unplaced > placed]
    values = call_values(calls, module_calls(text, module)) if heavier else {}
    kinds = written_kinds(calls, record, heavier)
    for i in heavier:
        if all(values.get(i, {}).get(b) == 1 for b, unplaced in kinds[i] if not unplaced):
            o = origins[i]
            out[i] = Origin(o.nodes, [], [], MOSTLY_UNPLACED, o.recomputed)
    return out


def written_kinds(calls: list[Call], record: dict[str, Any], among: list[int] | None = None,
                  ) -> dict[int, list[tuple[str, bool]]]:
    """Call position -> each buffer the generated kernel (of ``among``) writes that an operation
    of ``record`` writes, with whether the first operation writing it was made from no FX node
    (an operation with no origins: its own origins, ``own_nodes.own_origins``, are then none too)."""
    unplaced_of: dict[str, bool] = {}
    for op in record.get("ops") or []:
        for b in op.get("written", []):
            unplaced_of.setdefault(b, not op.get("origins"))
    return {i: [(b, unplaced_of[b]) for b in dict.fromkeys(calls[i].written or []) if b in unplaced_of]
            for i in (range(len(calls)) if among is None else among) if not calls[i].extern}


def placement_bytes(calls: list[Call], record: dict[str, Any], text: str, module: ModuleInfo,
                    among: list[int] | None = None, sizes: CallSizes | None = None,
                    ) -> dict[int, tuple[int, int]]:
    """Call position -> (bytes it writes for operations made from no FX node, bytes it writes for
    those made from some), for the generated kernels (of ``among``, call positions) that write
    for both kinds and whose buffers' sizes the module gives."""
    kinds = {i: ws for i, ws in written_kinds(calls, record, among).items()
             if len({unplaced for _, unplaced in ws}) == 2}
    if not kinds:
        return {}
    sizes = sizes if sizes is not None else call_bytes(calls, module_calls(text, module))
    out = {}
    for i, ws in kinds.items():
        size = [sizes.get(i, {}).get(b) for b, _ in ws]
        if all(n is not None for n in size):
            unplaced = sum(n for (_, u), n in zip(ws, size, strict=True) if u)
            out[i] = (unplaced, sum(size) - unplaced)
    return out


def call_bytes(calls: list[Call], args: list[CallArgs]) -> CallSizes:
    """Call position -> each buffer argument's bytes at that call: ``calls`` and the module's
    calls with their arguments (``module_calls``) matched as the k-th call of each name."""
    return _per_call(calls, args, lambda t: t.nbytes())


def call_values(calls: list[Call], args: list[CallArgs]) -> CallSizes:
    """Call position -> each buffer argument's number of elements at that call (as ``call_bytes``)."""
    return _per_call(calls, args, lambda t: t.numel)


def _per_call(calls: list[Call], args: list[CallArgs], measure: Callable[[Tensor], int | None]) -> CallSizes:
    """Call position -> each buffer argument's ``measure`` at that call (see ``call_bytes``)."""
    by_name: dict[str, list[CallArgs]] = {}
    for a in args:
        by_name.setdefault(a.name, []).append(a)
    seen: dict[str, int] = {}
    out: dict[int, dict[str, int | None]] = {}
    for i, c in enumerate(calls):
        nth = seen[c.name] = seen.get(c.name, -1) + 1
        same = by_name.get(c.name, [])
        if not c.extern and nth < len(same):
            out[i] = {name: measure(t) if t is not None else None
                      for name, t in zip(same[nth].args, same[nth].tensors, strict=False)}
    return out
