"""Extern calls' input strides read back from a compiled module's text, for a record kept
without them (pure; no torch).

A module served from Inductor's cache gets the record its generating compile kept
(``core/source_store.py``). A record kept by a version of this tool that recorded no strides
(``STRIDES_UNRECORDED``) still has each extern call's input shapes; the module's text states
the strides of every tensor its ``call()`` passes: a graph input's in its
``assert_size_stride(primals_1, (1024, 256), (256, 1), 'input')``, a buffer's in its
``empty_strided_cpu((128, 1024), (1024, 1), torch.float32)``, a view's in the
``reinterpret_tensor(primals_1, (256, 1024), (1, 256), 0)`` passed to the call
(``core/buffers.py``). A call's tensor arguments, in order, are its inputs as the lowering
recorded them (Inductor writes an extern call's arguments from its inputs, in order); where
their shapes are the recorded ones, their strides are taken, written as the lowering would
have written them (``runner/sources.py``: "" for the contiguous ones). Where they are not (a
size symbol of dynamic shapes, an argument the text does not resolve, a C++ wrapper), the
call's strides are unknown and its inputs say so (``UNKNOWN_STRIDES``), never contiguous by
default; diff compares such a call by its shapes alone (``core/call_pairs.py``).
"""

from __future__ import annotations

from typing import Any

from .buffers import CallArgs
from .callsites import Call
from .source_store import STRIDES_UNRECORDED
from .sources import UNKNOWN_STRIDES, call_shapes, contiguous, shape_text

UNKNOWN_NOTE = ("input strides unknown for {n} of {m} extern calls ('(strides ?)'): the module came "
                "from Inductor's cache with an attribution record from an older version of this tool, "
                "and its text does not state them; --fresh-cache records them")


def with_strides(shapes: dict[int, list[str]], calls: list[Call], args: list[CallArgs],
                 record: dict[str, Any]) -> tuple[dict[int, list[str]], list[str]]:
    """``shapes`` (call position -> its inputs, ``attribution.call_origins``) with their strides
    where ``record`` was kept without them, read from ``args`` (``buffers.module_calls``: the
    k-th call of each name is the k-th of ``calls``), and the graph's note where some are not
    known. As they are for any other record."""
    if not record.get(STRIDES_UNRECORDED):
        return shapes, []
    by_name: dict[str, list[CallArgs]] = {}
    for a in args:
        by_name.setdefault(a.name, []).append(a)
    nth: dict[int, int] = {}
    seen: dict[str, int] = {}
    for i, c in enumerate(calls):
        nth[i] = seen[c.name] = seen.get(c.name, -1) + 1
    out: dict[int, list[str]] = {}
    unknown = 0
    for i, recorded in shapes.items():
        same = by_name.get(calls[i].name, [])
        strides = call_strides(recorded, same[nth[i]]) if nth[i] < len(same) else None
        if strides is None:
            unknown += 1
            out[i] = [s + UNKNOWN_STRIDES for s in recorded]
        else:
            out[i] = call_shapes({"shapes": recorded, "strides": strides})
    return out, [UNKNOWN_NOTE.format(n=unknown, m=len(shapes))] if unknown else []


def call_strides(recorded: list[str], call: CallArgs) -> list[str] | None:
    """The strides of ``call``'s tensor arguments as the lowering records them (``1x256``; ""
    for contiguous ones), where those arguments are, in order, of the ``recorded`` shapes;
    None where not."""
    tensors = [t for t in call.tensors if t is not None]
    if len(tensors) != len(recorded):
        return None
    out = []
    for want, t in zip(recorded, tensors, strict=True):
        shape, strides = t.shape, t.strides
        if shape is None or strides is None or len(shape) != len(strides) or shape_text(shape) != want:
            return None
        out.append("" if contiguous(list(shape), list(strides)) else "x".join(map(str, strides)))
    return out

