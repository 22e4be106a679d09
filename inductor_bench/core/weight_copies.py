"""Kernel time spent copying weights into the layout an extern convolution or GEMM reads (pure).

Without freezing, Inductor's layout optimization copies each convolution's weight, a graph
input, into channels-last on every call: a generated operation whose origins are the
convolution's node alone (or none at all), writing the buffer the extern call then reads as
its weight. The scheduler fuses those copies into whatever C++ kernel is nearby (a block's
batch norm and ReLU), so no kernel is named for them. With ``--freezing`` the weights are
constants and the copy is done once, at compile time.

A kernel's time is shared out by the bytes it writes: the weight copies' part of them. The
bytes come from the compiled module (``core/buffers.py``); a call whose sizes are not known
counts for nothing.

In training (and wherever the copies are made from no FX node at all) the scheduler fuses them
into a kernel of their own, or with the BatchNorms' ``num_batches_tracked`` bumps; that kernel
runs no line of the model and no module (``core/unplaced.py``). Where most of the bytes it
writes are copies of convolutions' operands, its origin names that work and the views show it
as a row of its own rather than as a missing line or module: ``WEIGHT_COPIES`` where more of
them are weights, ``INPUT_COPIES`` where more are the model's input (small first convolutions:
a tiny conv net's 6.1 kB input beside 5.5 kB of weights). So is an inference kernel that does
nothing but copy convolutions' operands (a weight alone, or weights and the model's input,
where no batch norm is near to fuse with): made from the convolution's own node, it named that
convolution's line and module, which a training step's copies never do. A kernel that also
applies a batch norm keeps its modules, in training as in inference (``core/unplaced.py``): the
views never split a kernel (``core/module_bytes.py`` puts the convolution first, by bytes, in
inference).

The batch norms freezing also folds into the convolutions are not counted: Inductor computes
their scale (``1 / sqrt(var + eps)`` times the weight) per element inside the kernel that applies
them, in no kernel and no buffer of its own (docs/attribution.md).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from .buffers import CallArgs
from .callsites import Call
from .own_nodes import own_extern_nodes
from .results import GraphResult
from .sources import Origin
from .unplaced import MOSTLY_UNPLACED, NO_NODE, CallSizes

# an extern callee -> the position of the weight among its positional arguments
WEIGHT_ARG = {"extern_kernels.convolution": 1, "extern_kernels.mm": 1, "extern_kernels.bmm": 1,
              "extern_kernels.addmm": 2}
CONVOLUTION = "extern_kernels.convolution"

# the origin of a kernel that, made (mostly) from no FX node, mostly copies convolutions' weights
WEIGHT_COPIES = "weights copied into the convolutions' layout"
# ... and of one that mostly copies the convolutions' inputs (the model's input) into their layout
INPUT_COPIES = "input copied into the convolutions' layout"
COPIES = (WEIGHT_COPIES, INPUT_COPIES)  # the origins of the copy kernels, each a row of its own


def weight_readers(args: list[CallArgs], callees: Collection[str] = tuple(WEIGHT_ARG)) -> dict[str, str]:
    """Each buffer an extern convolution or GEMM of the module (one of ``callees``) reads as its
    weight -> the buffer that call returns."""
    return {a.args[WEIGHT_ARG[a.name]].strip(): a.result for a in args
            if a.extern and a.result and a.name in WEIGHT_ARG and a.name in callees
            and len(a.args) > WEIGHT_ARG[a.name]}


def convolution_operands(args: list[CallArgs]) -> dict[str, str]:
    """Each buffer an extern convolution of the module reads as its input or its weight -> the
    buffer that call returns."""
    return {a.args[k].strip(): a.result for a in args if a.extern and a.result and a.name == CONVOLUTION
            for k in (0, WEIGHT_ARG[CONVOLUTION]) if len(a.args) > k}


def copied_weights(record: dict[str, Any], args: list[CallArgs],
                   callees: Collection[str] = tuple(WEIGHT_ARG)) -> set[str]:
    """The weight buffers that generated operations copy for an extern call (one of ``callees``):
    each written by an operation made from no FX node, or made while lowering the node of the
    call that reads it (Inductor's origins pile up the nodes before it too: ``core/own_nodes.py``)."""
    return copied_for(record, weight_readers(args, callees))


def copied_for(record: dict[str, Any], readers: dict[str, str]) -> set[str]:
    """Of the buffers of ``readers`` (buffer -> the extern call's buffer that reads it), those
    written by an operation made from no FX node or from the node of the call that reads it."""
    ops = record.get("ops") or []
    node_of = {b: set(names) for op, names in zip(ops, own_extern_nodes(ops), strict=True)
               for b in op.get("written", []) if op.get("extern")}
    return {b for op in ops if not op.get("extern") for b in op.get("written", []) if b in readers
            if not op.get("origins") or node_of.get(readers[b], set()) & set(op["origins"])}


def weight_copy_ms(graph: GraphResult, calls: list[Call], record: dict[str, Any], args: list[CallArgs],
                   sizes: CallSizes) -> dict[str, float]:
    """Each kernel of ``graph`` that copies weights for extern calls -> its time per call spent
    so (see above)."""
    copied = copied_weights(record, args)
    bytes_of: dict[str, list[int]] = {}  # kernel -> [weight copies' bytes, all bytes written]
    for i, c in enumerate(calls):
        written = [sizes.get(i, {}).get(b) for b in dict.fromkeys(c.written or [])] if not c.extern else []
        if written and all(n is not None for n in written):
            mine = sum(n for b, n in zip(dict.fromkeys(c.written or []), written, strict=True) if b in copied)
            acc = bytes_of.setdefault(c.name, [0, 0])
            acc[0], acc[1] = acc[0] + mine, acc[1] + sum(written)
    return {k.name: k.ms * bytes_of[k.name][0] / bytes_of[k.name][1] for k in graph.kernels
            if bytes_of.get(k.name, [0, 0])[0] > 0}


def weight_copy_origins(origins: dict[int, Origin], calls: list[Call], record: dict[str, Any],
                        args: list[CallArgs], sizes: CallSizes) -> dict[int, Origin]:
    """``origins`` (call position -> Origin) with each generated kernel most of whose written bytes
    are convolutions' operands it copies named for that work: ``WEIGHT_COPIES`` where more of them
    are weights than inputs, else ``INPUT_COPIES``; where it is made, or made mostly, from no FX
    node (no line, no module: the BatchNorms' counters beside the copies), or where it only copies
    the convolutions' operands (inference: the copies made from a convolution's own node, which
    name its line and module); its nodes are kept. A call whose sizes are not known is left as it is."""
    weights = copied_weights(record, args, (CONVOLUTION,))
    operands = copied_for(record, convolution_operands(args))
    out = dict(origins)
    for i, o in origins.items():
        written = dict.fromkeys(calls[i].written or [])
        only_copies = bool(written) and all(b in operands for b in written)
        if calls[i].extern or not only_copies and (
                o.lines or o.modules or o.missing not in (NO_NODE, MOSTLY_UNPLACED)):
            continue
        size = {b: sizes.get(i, {}).get(b) for b in written}
        if not size or any(n is None for n in size.values()):
            continue
        copied = sum(n or 0 for b, n in size.items() if b in operands)
        of_weights = sum(n or 0 for b, n in size.items() if b in weights)
        if copied > sum(n or 0 for n in size.values()) - copied:
            work = WEIGHT_COPIES if of_weights > copied - of_weights else INPUT_COPIES
            out[i] = Origin(o.nodes, [], [], work, o.recomputed)
    return out
