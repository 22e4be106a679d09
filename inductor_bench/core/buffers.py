"""The tensors a compiled module's ``call()`` passes to each kernel and extern call: shape,
strides and element type, read from the module's text alone (pure; no torch).

Where a buffer's shape comes from, in the module's own words:

- graph inputs: ``assert_size_stride(arg, (shape), (stride), ...)`` (torch 2.14+ writes
  ``assert_tensor_metadata(arg, (shape), (stride), torch.float32, ...)`` where it knows the
  type, which it then also gives) and its grouped form
  ``assert_size_stride_grouped((a, b), ((shape_a), (shape_b)), ...)``, and the harness's
  ``rand_strided((shape), (stride), ..., dtype=torch.float32)`` (in ``get_args()``, or in
  ``benchmark_compiled_module`` before torch 2.11), which also gives their element type (a
  generated kernel's own signature gives it too, see ``core/work.py``), or its
  ``torch.as_strided(storage, (shape), (stride))`` for inputs that share a storage;
- allocations: ``bufN = empty_strided_<device>((shape), (stride), torch.float32)``;
- reuse and views: ``bufA = bufB; del bufB  # reuse`` and
  ``bufA = reinterpret_tensor(bufB, (shape), (stride), offset)`` (the view's own shape);
- extern results: ``bufN = extern_kernels.convolution(...)`` followed by
  ``assert_size_stride(bufN, ...)`` (or ``assert_tensor_metadata``); their type is that of
  the call's first tensor argument (or the one ``assert_tensor_metadata`` says); of a tuple
  result (``bufM = bufN[0]``, attention's), the first element has that type and the others
  none said (attention's logsumexp is float32 whatever its inputs).

A shape with a size symbol in it (dynamic shapes: ``s77``, ``ps0``) is read at the size the
harness measures (``core/symbols.py``); a symbol the module gives no value is unknown, and the
call that uses it is reported without a byte count rather than with a guess.

The walk over ``call()`` that gives each call its tensors is ``core/module_calls.py``.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field

from .callsites import buffer_of, split_args
from .dtypes import dtype_bytes
from .modparse import SUBGRAPH_CALL, string_lines
from .symbols import eval_shape, eval_size


@dataclass(frozen=True)
class Tensor:
    shape: tuple[int, ...] | None  # None: symbolic or not found
    dtype: str | None  # as the module spells it (``float32``); None: not said
    stored: int | None = None  # a broadcast view's (a stride of 0): the elements its memory holds
    strides: tuple[int, ...] | None = None  # as the module states them; None: not stated

    @property
    def numel(self) -> int | None:
        if self.shape is None:
            return None
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def held(self) -> int | None:
        """The elements its memory holds: ``stored`` for a broadcast view, else ``numel``."""
        return self.stored if self.stored is not None else self.numel

    def nbytes(self, dtype: str | None = None) -> int | None:
        """The bytes its memory holds (``held``), of its dtype or ``dtype``; None where its
        shape or the dtype's size is not known."""
        size = dtype_bytes(dtype or self.dtype)
        return None if self.numel is None or size is None else self.held * size


@dataclass
class CallArgs:
    """One call of ``call()`` with its argument texts."""

    name: str  # a kernel's name, or the extern callee (``extern_kernels.mm``)
    extern: bool
    args: list[str]  # positional arguments, as written
    kwargs: dict[str, str]  # keyword arguments, as written
    result: str | None = None  # ``bufN = extern(...)``: the buffer it returns
    tensors: list[Tensor | None] = field(default_factory=list)  # of ``args``, as they stood then
    out: Tensor | None = None  # the ``out=`` argument's tensor
    returned: Tensor | None = None  # ``bufN = extern(...)``: the tensor, as the module asserts it
    returned_items: dict[int, Tensor] = field(default_factory=dict)  # of a tuple result, as asserted
    values: list[int | None] = field(default_factory=list)  # of ``args``: integers at the harness's sizes


Returning = dict[str, tuple[CallArgs, int | None]]  # a name -> the call, and which element of its result

ASSIGN_LINE = re.compile(r"^\s+(?P<lhs>\w+)\s*=\s*(?P<rhs>.*)$")
_ALLOC = re.compile(r"^(?:empty_strided\w*|rand_strided)\((?P<args>.*)$")
_ASSERT = re.compile(r"^\s+assert_(?P<kind>size_stride|tensor_metadata)\((?P<args>.*)$")
_GROUPED = re.compile(r"^\s+assert_size_stride_grouped\((?P<args>.*)$")
TUPLE_ITEM = re.compile(r"(?P<of>\w+)\[(?P<index>\d+)\]")
# a subgraph function's inputs, its unpacking of them, what it returns, and its call
# (``modparse.run_order`` puts its body between the first two and the last)
_ARGS_LIST = re.compile(r"^\s+\w+_args\s*=\s*\[(?P<items>.*)\]\s*$")
_UNPACK_ARGS = re.compile(r"^\s+(?P<names>\w+(?:\s*,\s*\w+)*)\s*,?\s*=\s*args\s*$")
_RETURN = re.compile(r"^\s+return\s+\((?P<items>.*)\)\s*$")
TORCH_DTYPE = re.compile(r"(?:dtype\s*=\s*)?torch\.(\w+)")


def literal_shape(text: str) -> tuple[int, ...] | None:
    """``(64, 512)`` / ``[64, 512]`` / ``(512, )`` -> the ints; None when not all are ints."""
    try:
        v = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,)
    if isinstance(v, (tuple, list)) and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return tuple(v)
    return None


def _dtype_in(args: list[str]) -> str | None:
    for a in args:
        m = TORCH_DTYPE.search(a)
        if m and m.group(1) not in {"device", "float"} | {"ops"}:
            return m.group(1)
    return None


def _stored(shape: tuple[int, ...] | None, strides: tuple[int, ...] | None) -> int | None:
    """The elements a view's memory holds where it broadcasts (``expand``: a stride of 0 repeats
    the same elements along that dimension); None for a view without a zero stride."""
    if shape is None or strides is None or len(shape) != len(strides) or 0 not in strides:
        return None
    return math.prod(n for n, st in zip(shape, strides, strict=True) if st != 0)


class BufferTable:
    """Name -> Tensor for the buffers of one module, filled line by line in run order; a
    shape's size symbols read at ``env``'s values."""

    def __init__(self, env: dict[str, int] | None = None) -> None:
        self.tensors: dict[str, Tensor] = {}
        self.env = env or {}
        self.passed: list[Tensor | None] | None = None  # a subgraph's inputs, until it unpacks them
        self.returned: list[Tensor | None] = []  # what the last subgraph returned
        self.tuples: dict[str, list[Tensor | None]] = {}  # a subgraph call's result

    def shape(self, text: str) -> tuple[int, ...] | None:
        return literal_shape(text) if not self.env else eval_shape(text, self.env)

    def get(self, name: str) -> Tensor | None:
        return self.tensors.get(name)

    def put(self, name: str, shape: tuple[int, ...] | None, dtype: str | None,
            strides: tuple[int, ...] | None = None) -> None:
        old = self.tensors.get(name)
        kept = old if shape is None else None  # its shape and strides as they were
        strides = strides if strides is not None else (kept.strides if kept else None)
        self.tensors[name] = Tensor(kept.shape if kept else shape, dtype or (old.dtype if old else None),
                                    strides=strides)

    def of_arg(self, arg: str) -> Tensor | None:
        """The tensor an argument text names: a buffer, or a ``reinterpret_tensor`` view of one
        (the view's shape, the buffer's type)."""
        arg = arg.strip()
        base = buffer_of(arg)
        if base is None or base not in self.tensors:
            return None
        if arg.startswith("reinterpret_tensor("):
            parts = split_args(arg[len("reinterpret_tensor("):])
            shape = self.shape(parts[1]) if len(parts) > 1 else None
            strides = self.shape(parts[2]) if len(parts) > 2 else None
            return Tensor(shape, self.tensors[base].dtype, _stored(shape, strides), strides)
        return self.tensors[base]

    def bind(self, call: CallArgs) -> None:
        """Give ``call`` the tensors of its arguments as they stand now, the integer sizes of
        the others, and the tensor of its ``out=``."""
        call.tensors = [self.of_arg(a) for a in call.args]
        call.values = [None if t is not None else eval_size(a, self.env)
                       for a, t in zip(call.args, call.tensors, strict=True)]
        call.out = self.of_arg(call.kwargs["out"]) if "out" in call.kwargs else None

    def read_line(self, line: str) -> None:
        if (stated := asserted(line)) is not None:
            for name, shape, stride, dtype in stated:
                self.put(name, self.shape(shape), dtype, self.shape(stride) if stride else None)
            return
        if self._subgraph_line(line) or (m := ASSIGN_LINE.match(line)) is None:
            return
        lhs, rhs = m.group("lhs"), m.group("rhs").split(";")[0].strip()
        if (a := _ALLOC.match(rhs)) is not None:
            parts = split_args(a.group("args"))
            self.put(lhs, self.shape(parts[0]) if parts else None, _dtype_in(parts[2:]),
                     self.shape(parts[1]) if len(parts) > 1 else None)
        elif rhs.startswith("reinterpret_tensor(") and (t := self.of_arg(rhs)) is not None:
            self.tensors[lhs] = t
        elif re.fullmatch(r"\w+", rhs) and rhs in self.tensors:
            self.tensors[lhs] = self.tensors[rhs]
        elif (item := TUPLE_ITEM.fullmatch(rhs)) is not None and item["of"] in self.tuples:
            got = self.tuples[item["of"]]
            if int(item["index"]) < len(got) and (t := got[int(item["index"])]) is not None:
                self.tensors[lhs] = t
        elif (item := TUPLE_ITEM.fullmatch(rhs)) is not None and item["of"] in self.tensors:
            # an element of an extern's tuple result: the first is its output, of the call's
            # type (attention's; its logsumexp, further on, is float32 whatever the inputs)
            first = item["index"] == "0"
            self.tensors[lhs] = Tensor(None, self.tensors[item["of"]].dtype if first else None)

    def _subgraph_line(self, line: str) -> bool:
        """A subgraph's inputs (``f_args = [buf1, primals_4]``), which its first line gives its
        own names (``f_primals_0, f_primals_1 = args``), and what it returns (``return (f_buf1,
        )``), which its call's result holds (``buf2 = f(f_args)``; ``buf3 = buf2[0]``)."""
        if (m := _ARGS_LIST.match(line)) is not None:
            self.passed = [self.of_arg(a) for a in split_args(m["items"]) if a.strip()]
        elif (m := _UNPACK_ARGS.match(line)) is not None and self.passed is not None:
            for name, t in zip((n.strip() for n in m["names"].split(",")), self.passed, strict=False):
                if t is not None:
                    self.tensors[name] = t
            self.passed = None
        elif (m := _RETURN.match(line)) is not None:
            self.returned = [self.of_arg(a) for a in split_args(m["items"]) if a.strip()]
        elif (m := SUBGRAPH_CALL.match(line)) is not None:
            if m["into"]:
                self.tuples[m["into"]] = self.returned
        else:
            return False
        return True


Stated = tuple[str, str, str | None, str | None]  # name, shape, stride (texts), element type


def asserted(line: str) -> list[Stated] | None:
    """What an assert line of ``call()`` states of each tensor it checks: its name, shape and
    stride as written, and its element type where said (torch 2.14+'s
    ``assert_tensor_metadata``); of ``assert_size_stride_grouped((a, b), (shape_a, shape_b),
    (stride_a, stride_b), ...)`` each tensor's. None for a line that is no such assert."""
    if (m := _ASSERT.match(line)) is not None:
        parts = split_args(m.group("args"))
        if len(parts) < 2:
            return []
        typed = m.group("kind") == "tensor_metadata" and len(parts) >= 4
        return [(parts[0].strip(), parts[1], parts[2] if len(parts) > 2 else None,
                 _dtype_in(parts[3:4]) if typed else None)]
    if (m := _GROUPED.match(line)) is not None:
        return _grouped(m.group("args"))
    return None


def _grouped(args: str) -> list[Stated]:
    try:
        call = ast.parse("f(" + args, mode="eval").body
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return []
    tuples = call.args[:3] if isinstance(call, ast.Call) else []
    if len(tuples) < 2 or not all(isinstance(t, ast.Tuple) for t in tuples):
        return []
    names, shapes = tuples[0].elts, tuples[1].elts
    strides = tuples[2].elts if len(tuples) > 2 else [None] * len(names)
    return [(ast.unparse(n), ast.unparse(a), ast.unparse(b) if b is not None else None, None)
            for n, a, b in zip(names, shapes, strides, strict=False)]


_RAND_STRIDED = re.compile(r"^\s+(\w+)\s*=\s*rand_strided\((.*)$")
_AS_STRIDED = re.compile(r"^\s+(\w+)\s*=\s*torch\.as_strided\((.*)\)\s*$")


def input_tensors(text: str) -> dict[str, Tensor]:
    """Graph input -> its shape and element type, from the harness's ``rand_strided`` lines
    (``get_args()``, or ``benchmark_compiled_module`` before torch 2.11), and its views of a
    shared storage (``permute_1 = torch.as_strided(_shared_storage_9, (shape), (stride))``:
    inputs that alias each other, torch 2.13+; the storage's type); not those of the kernels'
    own harnesses inside their sources."""
    lines = text.splitlines()
    in_strings = string_lines(lines)
    out: dict[str, Tensor] = {}
    for i, ln in enumerate(lines):
        if i in in_strings:
            continue
        if (m := _RAND_STRIDED.match(ln)) is not None:
            parts = split_args(m.group(2))
            out[m.group(1)] = Tensor(literal_shape(parts[0]) if parts else None, _dtype_in(parts),
                                     strides=literal_shape(parts[1]) if len(parts) > 1 else None)
        elif (m := _AS_STRIDED.match(ln)) is not None:
            parts = split_args(m.group(2))
            base = out.get(parts[0].strip()) if parts else None
            shape = literal_shape(parts[1]) if len(parts) > 1 else None
            out[m.group(1)] = Tensor(shape, base.dtype if base else None)
    return out
