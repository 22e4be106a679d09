"""Read a compiled module Inductor wrote with its C++ wrapper (``torch._inductor.config.
cpp_wrapper = True``; pure text, no torch import).

Such a module is Python only around one C++ string, ``cpp_wrapper_src``: the graph's C++
kernels, each ``extern "C" void cpp_fused_...(...) { ... }``, and ``inductor_entry_impl``,
which runs them and the extern calls in order, each under the ``// Topologically Sorted
Source Nodes: [...], Original ATen: [...]`` comment its Python twin writes with ``#``. Python's
``call`` is ``_wrap_func(inductor_entry)``, and no ``# AOT ID`` line says the graph's role: the
compile worker records it (``runner/sources.py``).

An extern call is written two ways. Torch 2.5 calls ATen itself, ``at::addmm_out(buf0, ...)``,
which the profiler records as ``aten::addmm``. Later versions call the C shim of the op,
``AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_cpu_mm_out(buf0, ...))``, which bypasses the
dispatcher; with C++ kernel profiling on (as the tool compiles) the module records each such call
under the shim's own name, ``aoti_torch_cpu_mm_out``, and ``shim_op`` says which ATen op
that is (``aten::mm``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .devices import device_of_module
from .module_types import (
    RECORD,
    ExternCall,
    KernelInfo,
    ModuleInfo,
    cpp_heuristic,
    fused_ops_from_name,
    split_list,
)
from .vocab import Role

_ENTRY = re.compile(r"^\s*void inductor_entry_impl\(", re.M)
_ENTRY_END = "} // inductor_entry_impl"
_KERNEL_DEF = re.compile(r'^extern "C"\s+(?:\w+\s+)*?void\s+(?P<name>\w+)\([^)]*\)\s*\{', re.M)
_ORIGIN = re.compile(
    r"//\s*(?:Topologically Sorted|Unsorted) Source Nodes: \[(?P<nodes>[^\]]*)\], "
    r"Original ATen: \[(?P<aten>[^\]]*)\]"
)
_CALL = re.compile(r"^\s*(?P<name>\w+)\(")
# a call of the C shim of an op on a device (aoti_torch_cpu_mm_out, aoti_torch_cuda_convolution),
# checked as every shim call is; not a variable named after it (torch 2.15's inputs vector)
_SHIM_CALL = re.compile(r"\bAOTI_TORCH_ERROR_CODE_CHECK\((?P<shim>aoti_torch_(?:cpu|cuda|xpu|mps)_\w+)\(")
_SHIM = re.compile(r"^aoti_torch_(?:cpu|cuda|xpu|mps)_(?P<op>\w+)$")
_ATEN_CALL = re.compile(r"^\s*at::(?P<op>[a-z_]\w*)\(")  # torch 2.5: at::addmm_out(buf0, ...)
# torch 2.5's call of an op without an ATen function (a custom op, MKL's linear): the op found
# in the dispatcher once, ``static auto op_x = c10::Dispatcher::singleton().findSchemaOrThrow(
# "mkl::_mkl_linear", "")``, then ``auto buf0 = op_x.call(...)``, recorded as ``mkl::_mkl_linear``
_DISPATCHED = re.compile(r"static auto (?P<var>\w+) = c10::Dispatcher::singleton\(\)\s*"
                         r'\.findSchemaOrThrow\("(?P<ns>\w+)::(?P<op>\w+)", "(?P<overload>\w*)"\)')
_DISPATCHED_CALL = re.compile(r"^\s*(?:auto (?P<lhs>\w+) = )?(?P<var>\w+)\.call\(")
_OUT = "_out"
# a kernel's argument: ``(float*)(buf5.data_ptr())`` passes buffer ``buf5``
DATA_PTR = re.compile(r"^\([^()]*\)\((?P<buf>\w+)\.data_ptr\(\)\)$")
_HANDLE = "_handle"  # ``&buf3_handle``: the handle an op fills with buffer ``buf3``


def is_cpp_wrapper(text: str) -> bool:
    """Whether ``text`` is a compiled module of Inductor's C++ wrapper."""
    return "cpp_wrapper_src" in text and _ENTRY.search(text) is not None


def shim_op(name: str) -> str | None:
    """The ATen op a C shim runs, as the profiler names ATen ops: ``aoti_torch_cpu_mm_out`` ->
    ``aten::mm``, ``aoti_torch_cpu_convolution`` -> ``aten::convolution``; None for another
    name. The shim of an ``out=`` overload ends in ``_out``, which is not the op's name."""
    m = _SHIM.match(name)
    if m is None:
        return None
    op = m.group("op")
    return f"aten::{op[: -len(_OUT)] if op.endswith(_OUT) and len(op) > len(_OUT) else op}"


def _body_end(text: str, open_brace: int) -> int:
    """The index just past the ``}`` that closes the brace at ``open_brace``."""
    depth = 0
    for i in range(open_brace, len(text)):
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def _kernels(text: str) -> dict[str, KernelInfo]:
    kernels: dict[str, KernelInfo] = {}
    for m in _KERNEL_DEF.finditer(text):
        source = text[m.start(): _body_end(text, m.end() - 1)]
        kernels[m.group("name")] = KernelInfo(
            name=m.group("name"), kind="cpp", heuristic=cpp_heuristic(source),
            record_names=RECORD.findall(source), source=source)
    return kernels


def entry_lines(text: str) -> list[str]:
    """The lines of ``inductor_entry_impl``'s body, in the order they run."""
    m = _ENTRY.search(text)
    if m is None:
        return []
    end = text.find(_ENTRY_END, m.end())
    return text[m.end(): end if end != -1 else len(text)].splitlines()


@dataclass(frozen=True)
class CppExtern:
    """An extern call on a line of ``inductor_entry_impl``."""

    callee: str  # the shim's name; for torch 2.5 ``aten.<op>`` or ``torch.ops.<ns>.<op>.<overload>``
    args: str  # the text after its opening parenthesis
    out: bool  # an ``out=`` overload: its first argument is what it writes
    result: str | None = None  # ``auto buf0 = op_x.call(...)``: the buffer it returns

    def writes(self, args: list[str]) -> list[str]:
        """What the call writes, of its arguments ``args`` (split): an ``out=`` overload its
        first, as written; another op what it returns and the buffers of the handles it is
        given to fill (``&buf3_handle``: ``buf3``)."""
        if self.out:
            return args[:1]
        filled = [a[1:-len(_HANDLE)] for a in args if a.startswith("&") and a.endswith(_HANDLE)]
        return [self.result, *filled] if self.result else filled


def dispatched_ops(text: str) -> dict[str, str]:
    """Torch 2.5: each op a module finds in the dispatcher, by the variable that holds it, as
    the callee ``torch.ops.<ns>.<op>.<overload>`` (see ``_DISPATCHED``)."""
    return {m.group("var"): f"torch.ops.{m.group('ns')}.{m.group('op')}.{m.group('overload') or 'default'}"
            for m in _DISPATCHED.finditer(text)}


def extern_call(line: str, dispatched: dict[str, str] | None = None) -> CppExtern | None:
    """The extern call ``line`` makes, or None (the profiler records torch 2.5's
    ``at::addmm_out`` as ``aten::addmm``, a shim under its own name). ``dispatched``: the
    module's ``dispatched_ops``."""
    dispatched = dispatched or {}
    if (m := _SHIM_CALL.search(line)) is not None:
        return CppExtern(m.group("shim"), line[m.end():], m.group("shim").endswith(_OUT))
    if (m := _ATEN_CALL.match(line)) is not None:
        op = m.group("op")
        out = op.endswith(_OUT)
        return CppExtern(f"aten.{op[: -len(_OUT)] if out else op}", line[m.end():], out)
    if (m := _DISPATCHED_CALL.match(line)) is not None and m.group("var") in dispatched:
        return CppExtern(dispatched[m.group("var")], line[m.end():], False, m.group("lhs"))
    return None


def parse(text: str) -> ModuleInfo:
    """The module's kernels and extern calls, in the order ``inductor_entry_impl`` runs them,
    each with the source nodes and ATen ops of its comment; its role unknown (the text says
    none)."""
    kernels = _kernels(text)
    externs: list[ExternCall] = []
    pending: tuple[list[str], list[str]] | None = None
    dispatched = dispatched_ops(text)
    for line in entry_lines(text):
        if (om := _ORIGIN.search(line)) is not None:
            pending = (split_list(om.group("nodes")), split_list(om.group("aten")))
        elif (ext := extern_call(line, dispatched)) is not None:
            nodes, aten = pending or ([], [])
            externs.append(ExternCall(callee=ext.callee, aten_ops=aten, source_nodes=nodes))
            pending = None
        elif (cm := _CALL.match(line)) is not None and cm.group("name") in kernels:
            k = kernels[cm.group("name")]
            if pending and not k.aten_ops:
                k.source_nodes, k.aten_ops = pending
            pending = None
    for k in kernels.values():
        if not k.aten_ops:
            k.aten_ops = fused_ops_from_name(k.name)
    return ModuleInfo("", Role.UNKNOWN, kernels, externs, device_of_module(text, text))


# how the C++ printer writes an integer size (torch/utils/_sympy/printers.py's CppPrinter) ->
# its Python twin: ``c10::div_floor_integer(static_cast<int64_t>(1L + s27),
# static_cast<int64_t>(2L))`` is ``floordiv((1 + s27), (2))``
_CPP_SIZE = [(re.compile(r"\bstatic_cast<\s*int64_t\s*>\s*\("), "("),
             (re.compile(r"\bc10::div_floor_integer\s*\("), "floordiv("),
             (re.compile(r"\bc10::div_mod\s*\("), "mod("),
             (re.compile(r"\bstd::(max|min)\s*\("), r"\1("),
             (re.compile(r"\b(\d+)L{1,2}\b"), r"\1")]


def cpp_size(text: str) -> str:
    """A size the C++ wrapper writes, as the Python wrapper's arithmetic (``2L + 2L*s27`` ->
    ``2 + 2*s27``; an integer division, ``c10::div_floor_integer``, -> ``floordiv``)."""
    for pattern, python in _CPP_SIZE:
        text = pattern.sub(python, text)
    return text
