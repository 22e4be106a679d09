"""Every kernel and extern call a compiled module's ``call()`` makes, with its tensors then."""

from __future__ import annotations

import re
from collections.abc import Callable

from .buffers import (
    ASSIGN_LINE,
    TORCH_DTYPE,
    TUPLE_ITEM,
    BufferTable,
    CallArgs,
    Returning,
    asserted,
    input_tensors,
)
from .callsites import split_args
from .modparse import ModuleInfo, extern_line, partition_names, run_order
from .symbols import sizes

_KERNEL = re.compile(r"^\s+(?P<name>\w+)(?:\.run)?\((?P<args>.*)$")
_KWARG = re.compile(r"^(?P<key>\w+)\s*=\s*(?P<value>.*)$", re.S)


def module_calls(text: str, module: ModuleInfo,
                 result_shape: Callable[[CallArgs], tuple[int, ...] | None] | None = None,
                 fixed: dict[str, int] | None = None, table: BufferTable | None = None) -> list[CallArgs]:
    """Every kernel and extern call ``call()`` makes, in order, each with the tensors of its
    arguments as they stood at that call (a buffer name is reused as ``call()`` goes on).
    ``result_shape``: the shape an extern call returns, where the module asserts none;
    ``fixed``: size symbols at other values than the harness's (``breakdown --size``);
    ``table``: another reading of the shapes than their values (``core/stride_rebuild.py``)."""
    table = table or BufferTable(sizes(text, fixed))
    for name, t in input_tensors(text).items():
        table.put(name, t.shape, t.dtype, t.strides)
    lines = text.splitlines()
    calls: list[CallArgs] = []
    returning: Returning = {}  # the last extern call's result, its aliases and its elements
    for i, _ in run_order(lines, partition_names(text)):
        ln = lines[i]
        if ln.lstrip().startswith("#") or not ln.strip():
            continue
        call = call_of(ln, module)
        if call is None:
            table.read_line(ln)
            follow_result(ln, table, returning)
            continue
        table.bind(call)
        calls.append(call)
        returning = {call.result: (call, None)} if call.result and call.out is None else {}
        if call.result:
            shape = result_shape(call) if result_shape is not None else None
            table.put(call.result, shape, result_dtype(call))
    return calls


_COMPLEX_OF = {"float16": "complex32", "float32": "complex64", "float64": "complex128"}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}


def result_dtype(call: CallArgs) -> str | None:
    """The element type an extern call returns: its ``out_dtype=``, a search's positions
    (``searchsorted``: int64, or int32 with ``out_int32=True``; ``nonzero``'s indices: int64), a
    real FFT's complex type (or back), the real type of a complex's ``abs`` or ``angle``, else
    its first tensor's."""
    if (m := TORCH_DTYPE.search(call.kwargs.get("out_dtype", ""))) is not None:
        return m.group(1)
    first = next((t.dtype for t in call.tensors if t is not None), None)
    if re.search(r"\b(?:searchsorted|bucketize)\b", call.name):  # the positions it finds
        return "int32" if call.kwargs.get("out_int32") == "True" else "int64"
    if re.search(r"\b(?:nonzero|nonzero_static|argwhere)\b", call.name):  # the indices it finds
        return "int64"
    if "_fft_r2c" in call.name:
        return _COMPLEX_OF.get(first or "", first)
    if "_fft_c2r" in call.name or re.search(r"\b(?:abs|angle)\b", call.name):  # a complex's magnitude
        return _REAL_OF.get(first or "", first)
    return first


def follow_result(line: str, table: BufferTable, returning: Returning) -> None:
    """An extern call's result as the lines after it say: an alias of it (``buf2 = buf1``) or an
    element of its tuple result (``buf3 = buf1[0]``) joins ``returning``; the assert of its
    shape (``assert_size_stride(buf2, (256, 128), ...)``) gives the call its ``returned`` tensor,
    or, for an element, one of its ``returned_items``. The elements the module never takes (a
    solve's LU when only its solution is used) are not seen."""
    if not returning:
        return
    if (stated := asserted(line)) is not None:
        for name, *_ in stated:
            if (got := returning.pop(name, None)) is None or (t := table.get(name)) is None:
                continue
            call, index = got
            if index is not None:
                call.returned_items.setdefault(index, t)
            elif call.returned is None:
                call.returned = t
        return
    if (m := ASSIGN_LINE.match(line)) is not None:
        rhs = m.group("rhs").split(";")[0].strip()
        if rhs in returning:
            returning[m.group("lhs")] = returning[rhs]
        elif (item := TUPLE_ITEM.fullmatch(rhs)) is not None and item["of"] in returning:
            call, index = returning[item["of"]]
            if index is None:
                returning[m.group("lhs")] = (call, int(item["index"]))


def call_of(line: str, module: ModuleInfo) -> CallArgs | None:
    """The call a line of ``call()`` makes, of an extern op or of one of the module's kernels,
    with its arguments as written; None for any other line."""
    if (em := extern_line(line)) is not None:
        args, kwargs = _split_kw(split_args(em.args))
        return CallArgs(em.callee, True, args, kwargs, em.lhs)
    km = _KERNEL.match(line)
    if km and km.group("name") in module.kernels:
        args, kwargs = _split_kw(split_args(km.group("args")))
        return CallArgs(km.group("name"), False, args, kwargs)
    return None


def _split_kw(parts: list[str]) -> tuple[list[str], dict[str, str]]:
    args: list[str] = []
    kwargs: dict[str, str] = {}
    for p in parts:
        m = _KWARG.match(p)
        if m and not p.startswith(("(", "[")):
            kwargs[m.group("key")] = m.group("value").strip()
        else:
            args.append(p)
    return args, kwargs
