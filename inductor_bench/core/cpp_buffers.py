"""The tensors a C++ wrapper module's ``inductor_entry_impl`` passes to each kernel and extern
call (``core/cppwrapper.py``): ``core/buffers.py``'s reading of a Python ``call()``, for the
C++ the wrapper writes instead (pure text; no torch).

Where a buffer's shape comes from, in the module's own words:

- graph inputs: the Python harness's ``rand_strided`` lines, as for a Python module, and
  ``assert_size_stride(arg, {16L, 32L}, {32L, 1L}, "input")``;
- allocations: ``aoti_torch_empty_strided(2, int_array_0, int_array_1,
  cached_torch_dtype_float32, ..., &buf0_handle)`` with the ``static constexpr int64_t
  int_array_0[] = {16L, 64L};`` it names, or torch 2.5's ``at::Tensor buf0 =
  at::detail::empty_strided_cpu({16L, 64L}, {64L, 1L}, at::kFloat);``;
- reuse and views: ``auto buf2 = std::move(buf1);  // reuse``, ``aoti_torch_new_tensor_handle(x,
  &tmp_x_0)`` and ``reinterpret_tensor_wrapper(buf3, 2, int_array_4, int_array_6, 0L)`` (torch
  2.5: ``reinterpret_tensor(buf2, {16L, 1L}, {1L, 1L}, 0L)``), the view's own shape.

Each argument is rewritten as its Python twin writes it (``(float*)(buf5.data_ptr())`` is
``buf5``, a view ``reinterpret_tensor(buf3, (16, 1), (1, 1), 0)``), so that the buffer table and
the counting rules are ``core/buffers.py``'s and ``core/work.py``'s. An op's ``out=`` overload
(``aoti_torch_cpu_addmm_out(buf0, bias, a, b, 1L, 1L)``) writes its first argument, which
becomes its ``out``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .buffers import BufferTable, CallArgs, Returning, input_tensors
from .callsites import split_args
from .cppwrapper import DATA_PTR, cpp_size, dispatched_ops, entry_lines, extern_call
from .modparse import ModuleInfo
from .module_calls import follow_result, result_dtype
from .symbols import sizes

# ``static constexpr``; ``const`` where a size symbol is in it (dynamic shapes: ``{s27, 32L}``)
_INT_ARRAY = re.compile(r"(?:static constexpr|const) int64_t (?P<name>\w+)\[\] = \{(?P<items>[^}]*)\};")
_AOTI_ALLOC = re.compile(r"aoti_torch_empty_strided\(\d+, (?P<size>\w+), (?P<stride>\w+), "
                         r"cached_torch_dtype_(?P<dtype>\w+),.*&(?P<buf>\w+?)_handle\)")
_AT_ALLOC = re.compile(r"^\s*at::Tensor (?P<buf>\w+) = at::detail::empty_strided_\w+\("
                       r"\{(?P<size>[^}]*)\}, \{(?P<stride>[^}]*)\}, at::k(?P<dtype>\w+)\)")
_ASSERT = re.compile(r"^\s*assert_size_stride\(\w+, \{")
_MOVE = re.compile(r"^\s*auto (?P<lhs>\w+) = std::move\((?P<rhs>\w+)\);")
_NEW_HANDLE = re.compile(r"aoti_torch_new_tensor_handle\((?P<of>\w+), &(?P<name>\w+)\)")
_VIEW = re.compile(r"^\s*(?:auto|decltype\(auto\)) (?P<lhs>\w+) = (?P<rhs>[^;]*);")
_KERNEL_CALL = re.compile(r"^\s*(?P<name>\w+)\((?P<args>.*)$")
_WRAPPED = re.compile(r"^(?:wrap_with_raii_handle_if_needed|RAIIAtenTensorHandle)\((?P<inner>.*)\)$")
_VIEW_WRAPPER = re.compile(r"^reinterpret_tensor_wrapper\((?P<args>.*)\)$")
_VIEW_AT = re.compile(r"^reinterpret_tensor\((?P<args>.*)\)$")
# torch 2.5's ATen scalar types, as torch names them
_AT_TYPES = {"Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16",
             "Long": "int64", "Int": "int32", "Short": "int16", "Char": "int8", "Byte": "uint8",
             "Bool": "bool"}


def _tuple(items: str) -> str:
    """``16L, 64L`` -> ``(16, 64)``; ``64L, `` -> ``(64,)``; a size of dynamic shapes as Python
    writes it (``cppwrapper.cpp_size``)."""
    parts = [cpp_size(p) for p in split_args(items) if p.strip()]
    return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"


def _braces_as_tuples(text: str) -> str:
    """Each C++ list in ``text`` as a Python tuple: ``{16L, 1L}`` -> ``(16, 1)``."""
    return re.sub(r"\{([^}]*)\}", lambda b: _tuple(b.group(1)), text)


def py_arg(arg: str, arrays: dict[str, str]) -> str:
    """A C++ wrapper's argument as the Python wrapper writes it (see the module doc)."""
    arg = arg.strip()
    if (m := DATA_PTR.match(arg)) is not None:
        return m.group("buf")
    if (m := _WRAPPED.match(arg)) is not None:
        return py_arg(m.group("inner"), arrays)
    if (m := _VIEW_WRAPPER.match(arg)) is not None:  # (base, ndim, sizes, strides, offset)
        parts = split_args(m.group("args"))
        if len(parts) == 5:
            size, stride = arrays.get(parts[2]), arrays.get(parts[3])
            return f"reinterpret_tensor({parts[0]}, {size}, {stride}, {py_arg(parts[4], arrays)})"
    if (m := _VIEW_AT.match(arg)) is not None:  # torch 2.5: (base, {sizes}, {strides}, offset)
        inner = _braces_as_tuples(m.group("args"))
        return f"reinterpret_tensor({', '.join(py_arg(p, arrays) for p in split_args(inner))})"
    return cpp_size(arg)


def cpp_module_calls(text: str, module: ModuleInfo,
                     result_shape: Callable[[CallArgs], tuple[int, ...] | None] | None = None,
                     fixed: dict[str, int] | None = None, table: BufferTable | None = None) -> list[CallArgs]:
    """``module_calls.module_calls`` of a C++ wrapper module: every kernel and extern call
    ``inductor_entry_impl`` makes, in order, with the tensors of its arguments; each line that
    calls nothing is read as the Python line it stands for (``py_line``)."""
    table = table or BufferTable(sizes(text, fixed))
    for name, t in input_tensors(text).items():
        table.put(name, t.shape, t.dtype, t.strides)
    arrays: dict[str, str] = {}
    calls: list[CallArgs] = []
    returning: Returning = {}  # the last extern call's result and its aliases
    dispatched = dispatched_ops(text)
    for ln in entry_lines(text):
        if ln.lstrip().startswith("//"):
            continue
        call = _call_of(ln, module, arrays, dispatched)
        if call is None:
            if (py := py_line(ln, arrays)) is not None:
                table.read_line(py)
                follow_result(py, table, returning)
            continue
        table.bind(call)
        calls.append(call)
        returning = {call.result: (call, None)} if call.result else {}
        if call.result:
            table.put(call.result, result_shape(call) if result_shape else None, result_dtype(call))
    return calls


def _call_of(line: str, module: ModuleInfo, arrays: dict[str, str],
             dispatched: dict[str, str]) -> CallArgs | None:
    if (ext := extern_call(line, dispatched)) is not None:
        args = [py_arg(a, arrays) for a in split_args(ext.args)]
        written = ext.writes(args)
        args = [a for a in args if not a.startswith("&")]  # a handle to fill is no input
        if ext.out and args:
            return CallArgs(ext.callee, True, args[1:], {"out": args[0]})
        return CallArgs(ext.callee, True, args, {}, written[0] if written else None)
    km = _KERNEL_CALL.match(line)
    if km is not None and km.group("name") in module.kernels:
        args = [py_arg(a, arrays) for a in split_args(km.group("args"))]
        return CallArgs(km.group("name"), False, args, {})
    return None


def py_line(line: str, arrays: dict[str, str]) -> str | None:
    """The Python line a C++ line that calls nothing stands for, as ``call()`` would write it
    (an allocation, an asserted shape, a reuse, a view); None for another line. An array of
    sizes it declares is kept in ``arrays``."""
    if (m := _INT_ARRAY.search(line)) is not None:
        arrays[m.group("name")] = _tuple(m.group("items"))
        return None
    if (m := _AOTI_ALLOC.search(line)) is not None and m.group("size") in arrays:
        size, stride = arrays[m.group("size")], arrays.get(m.group("stride"), "()")
        return f"    {m.group('buf')} = empty_strided({size}, {stride}, torch.{m.group('dtype')})"
    if (m := _AT_ALLOC.match(line)) is not None and m.group("dtype") in _AT_TYPES:
        size, stride = _tuple(m.group("size")), _tuple(m.group("stride"))
        return f"    {m.group('buf')} = empty_strided({size}, {stride}, torch.{_AT_TYPES[m.group('dtype')]})"
    if _ASSERT.match(line) is not None:
        return "    " + _braces_as_tuples(line.strip().rstrip(";"))
    if (m := _MOVE.match(line)) is not None:
        return f"    {m.group('lhs')} = {m.group('rhs')}"
    if (m := _NEW_HANDLE.search(line)) is not None:
        return f"    {m.group('name')} = {m.group('of')}"
    if (m := _VIEW.match(line)) is not None:
        return f"    {m.group('lhs')} = {py_arg(m.group('rhs'), arrays)}"
    return None
