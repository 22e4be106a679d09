"""Extern calls' input strides read back from a compiled module's text, for a record kept
without them (pure; no torch).

A module served from Inductor's cache gets the record its generating compile kept
(``core/source_store.py``). A record kept by a version of this tool that recorded no strides
(``source_store.strides_unrecorded``: such a cache entry, or the ``sources.json`` of a run saved
then, which ``report --reanalyze`` reads again) still has each extern call's input shapes; the
module's text states
the strides of every tensor its ``call()`` passes: a graph input's in its
``assert_size_stride(primals_1, (1024, 256), (256, 1), 'input')``, a buffer's in its
``empty_strided_cpu((128, 1024), (1024, 1), torch.float32)``, a view's in the
``reinterpret_tensor(primals_1, (256, 1024), (1, 256), 0)`` passed to the call
(``core/buffers.py``); a C++ wrapper's in its ``assert_size_stride(arg0_1, {64L, 24L}, {24L,
1L}, "input")``, its ``aoti_torch_empty_strided`` and ``reinterpret_tensor_wrapper`` of the
``int_array_N`` they name (``core/cpp_buffers.py``). A call's tensor arguments, in order, are
its inputs as the lowering recorded them (Inductor writes an extern call's arguments from its
inputs, in order); where their shapes are the recorded ones, their strides are taken, written
as the lowering would have written them (``runner/sources.py``: "" for the contiguous ones).

Sizes and strides are read as the module writes them, not at the harness's values: a graph
compiled with dynamic shapes records ``s27xs77 (strides 1xs27)`` with the size symbols its
module writes (``reinterpret_tensor(arg2_1, (s27, s77), (1, s27), 0)``), and the report reads
them at the sizes it measured (``symbols.shapes_at``). A shape matches where each dimension is
the same polynomial of the symbols and their floor divisions (``core/sizepoly.py``: the
module's ``(1 + s27) // 2`` is the record's ``((s27 + 1)//2)``); the strides are contiguous
where they are those of the shape for every value of the symbols (as the lowering judges them),
not only at the measured ones. Strides are written as the module writes them (``1x2 + 2*s27``,
where the lowering's record writes ``1x2*s27 + 2``): diff compares them as sizes, not as text
(``sizepoly.same_shape``). A size that is no such polynomial, a shape that is not the recorded
one, an argument the text does not resolve: the call's strides are unknown and its inputs say
so (``UNKNOWN_STRIDES``), never contiguous by default; diff compares such a call by its shapes
alone (``core/call_pairs.py``).
"""

from __future__ import annotations

import ast
from typing import Any

from .buffers import BufferTable, CallArgs
from .callsites import Call
from .cpp_buffers import cpp_module_calls
from .cppwrapper import is_cpp_wrapper
from .modparse import ModuleInfo
from .module_calls import module_calls
from .sizepoly import poly, written
from .source_store import strides_unrecorded
from .sources import UNKNOWN_STRIDES, call_shapes, contiguous, shape_dims

UNKNOWN_NOTE = ("input strides unknown for {n} of {m} extern calls ('(strides ?)'): the module's "
                "attribution record is from an older version of this tool (kept in Inductor's cache, "
                "or in a run saved then), which recorded none, and its text does not state them; a "
                "breakdown with --fresh-cache records them")


def with_strides(shapes: dict[int, list[str]], calls: list[Call], text: str, module: ModuleInfo,
                 record: dict[str, Any]) -> tuple[dict[int, list[str]], list[str]]:
    """``shapes`` (call position -> its inputs, ``attribution.call_origins``) with their strides
    where ``record`` was kept without them, read from the module's ``text`` (the k-th call of
    each name there is the k-th of ``calls``), and the graph's note where some are not known.
    As they are for any other record."""
    if not strides_unrecorded(record):
        return shapes, []
    by_name: dict[str, list[CallArgs]] = {}
    for a in written_calls(text, module):
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


class WrittenTable(BufferTable):
    """``buffers.BufferTable`` with each size and stride as the module writes it (``s27``,
    ``64*s77``, ``256``), not its value."""

    def shape(self, text: str) -> tuple[str, ...] | None:  # type: ignore[override]
        try:
            node = ast.parse(text.strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        elts = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
        return tuple(ast.unparse(e) for e in elts)


def written_calls(text: str, module: ModuleInfo) -> list[CallArgs]:
    """The module's calls (Python or C++ wrapper) with their tensors' sizes and strides as
    written (``WrittenTable``)."""
    read = cpp_module_calls if is_cpp_wrapper(text) else module_calls
    return read(text, module, table=WrittenTable())


def call_strides(recorded: list[str], call: CallArgs) -> list[str] | None:
    """The strides of ``call``'s tensor arguments as the lowering records them (``1x256``,
    ``1xs27``; "" for contiguous ones), where those arguments are, in order, of the
    ``recorded`` shapes; None where not, or where a size is not a polynomial of the symbols
    and their floor divisions (``sizepoly``)."""
    tensors = [t for t in call.tensors if t is not None]
    if len(tensors) != len(recorded):
        return None
    out = []
    for want, t in zip(recorded, tensors, strict=True):
        dims = [] if want == "scalar" else shape_dims(want)
        if t.shape is None or t.strides is None or not len(t.shape) == len(t.strides) == len(dims):
            return None
        shape, strides = [poly(d) for d in t.shape], [poly(s) for s in t.strides]
        if None in shape or None in strides or shape != [poly(d) for d in dims]:
            return None
        out.append("" if contiguous(shape, strides) else "x".join(written(str(s)) for s in t.strides))
    return out
