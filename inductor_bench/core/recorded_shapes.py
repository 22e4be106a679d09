"""What an op's call computes, from what ``record_shapes=True`` wrote of it into a profiler
trace: its arguments' ``Input Dims`` and ``Input type``, and the values of its scalar
arguments, ``Concrete Inputs`` (torch writes the lists as ``"[2, 2]"``, the flags as
``"False"``); pure, no torch.

An operand shown whose ``Input Strides`` are not the contiguous (row-major) ones of its size is
shown with them, as ``breakdown`` shows an extern call's input (``sources.STRIDES``):
``96x128 (strides 1x96) @ 128x32`` is the product of a transposed view, a row of its own beside
the contiguous ``96x128 @ 128x32``. A convolution's backward shows its output gradient after the
arrow, its strides with it: ``2x4x8x8 * 8x4x3x3 -> 2x8x8x8 (strides 512x1x64x8)``, a
channels-last gradient, is a row apart from the contiguous one; attention's backward shows its
output gradient after them (``q 2x4x64x8, kv 2x4x64x8, grad 2x4x64x8 (strides 2048x8x32x1),
causal``). A
dimension of size 1 may have any stride; a trace without strides shows the shapes alone.

The FLOPs are counted as ``breakdown`` counts an extern call (``core/extern_work.py``), with the same
functions, so that the two commands agree on one op:

- a **GEMM** (``aten::mm``, ``addmm``, ``bmm``, ``baddbmm``; int8's ``_int_mm``, fp8's
  ``_scaled_mm``, a mixture of experts' ``_grouped_mm`` and ``_scaled_grouped_mm``): 2·M·N·K a
  product, each row of a grouped product's ragged input by its group's weight
  (``other_ops.gemm_flops``);
- a **convolution** (``aten::convolution``, the op every ``conv*d`` and Inductor's extern
  convolution call) and its backward (``aten::convolution_backward``):
  ``conv_attention.conv_work`` / ``conv_backward_work``. The forward's output size needs its
  stride, padding and dilation, the backward's count the flags of what it computes: a call
  whose ``Concrete Inputs`` are not in the trace is not counted (guessing a stride of 1 would
  count a strided convolution's FLOPs several times over);
- the **oneDNN and MKL ops of CPU freezing** (``mkldnn::_convolution_pointwise`` and its fused
  binary forms, ``mkldnn::_linear_pointwise``, ``mkl::_mkl_linear``): ``extern_work.onednn_work``, a
  convolution's count and 2·M·N·K. The trace names no overload: the number of arguments tells a
  binary form (13 for a convolution, 5 for a linear) from the default;
- **scaled-dot-product attention**, the op that does the work (the flash / efficient / cuDNN /
  CPU flash ops and their backward, not the ``scaled_dot_product_attention`` that dispatches
  to them): ``conv_attention.attention_work``, under the causal mask where its ``is_causal``
  says so (not counted where the trace does not say).

The ops that compute through others (``aten::conv2d``, ``aten::_convolution``,
``aten::linear``, ``aten::matmul``) are not counted, so no call is counted twice.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .buffers import CallArgs, Tensor
from .conv_attention import CAUSAL_AT, attention_work, conv_backward_work, conv_output, conv_work, is_causal
from .dtypes import float_kind
from .extern_work import ONEDNN_CONV, ONEDNN_LINEAR, onednn_output, onednn_work
from .other_ops import GEMM_OPERANDS, gemm_flops
from .sources import STRIDES, contiguous

# the oneDNN and MKL ops of CPU freezing: op -> {number of arguments: overload}
ONEDNN = {
    "mkldnn::_convolution_pointwise": {10: "default", 13: "binary"},
    "mkldnn::_convolution_pointwise_": {13: "binary"},
    "mkldnn::_linear_pointwise": {6: "default", 5: "binary"},
    "mkl::_mkl_linear": {5: "default"},
}
GEMM_OPS = frozenset({"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::_int_mm",
                      "aten::_scaled_mm", "aten::_grouped_mm", "aten::_scaled_grouped_mm",
                      "mkldnn::_linear_pointwise", "mkl::_mkl_linear"})
CONV_OPS = frozenset({"aten::convolution", "aten::convolution_backward", "mkldnn::_convolution_pointwise",
                      "mkldnn::_convolution_pointwise_"})
# the _flash_attention_* ops run inside the _scaled_dot_product_flash_attention ones: not
# counted, so that a call is counted once
ATTENTION_OPS = frozenset(f"aten::{op}" for op in CAUSAL_AT if op.startswith("_scaled_dot_product"))
SHAPED_OPS = GEMM_OPS | CONV_OPS | ATTENTION_OPS
# the arguments shown of each, in the order a row shows them: a GEMM's two operands, a
# convolution's input and weight (its backward's, after them, the output's gradient, its first
# argument: a channels-last gradient a row of its own), attention's query, key and value (its
# backward's, after them, the output's gradient, its first argument too)
_CONV_SHOWN = {"aten::convolution": (0, 1), "aten::convolution_backward": (1, 2, 0)}
_GRADIENTS = ("input", "weight", "bias")


@dataclass(frozen=True)
class Described:
    """One call of a shaped op, as a row of the section names it."""

    op: str  # "aten::addmm"
    shapes: str  # "128x256 @ 256x1024"; "8x64x56x56 * 64x64x3x3 -> 8x64x56x56"
    dtype: str  # the shown arguments' type: "fp32", "bf16" ...
    flops: float  # per call
    # the shown arguments' recorded strides, as the trace wrote them; None: it wrote none, or a
    # oneDNN op (a packed weight)
    strides: tuple[Any, ...] | None = None


def describe(name: str, dims: Any, types: Any, concrete: Any, strides: Any = None) -> Described | None:
    """The call of op ``name`` with these recorded arguments; None where they give no count
    (a trace written by hand or cut short may hold a stride of 0, a kernel larger than its
    padded input: no count rather than a failure or a negative one)."""
    if not isinstance(dims, tuple) or not isinstance(types, tuple):
        return None
    ts = [_tensor(d, types[i] if i < len(types) else None) for i, d in enumerate(dims)]
    marks = [_strides(d, strides[i] if isinstance(strides, tuple) and i < len(strides) else None)
             for i, d in enumerate(dims)]
    try:
        found = _described(name, ts, concrete, len(dims), marks)
    except (ArithmeticError, IndexError, ValueError):
        return None
    if found is None or found.flops <= 0:
        return None
    return found if not isinstance(strides, tuple) else _with_strides(name, found, strides)


def _with_strides(name: str, found: Described, strides: tuple[Any, ...]) -> Described:
    """``found`` with its shown arguments' recorded strides (``Described.strides``)."""
    at = _shown_at(name)
    return replace(found, strides=tuple(strides[i] if i < len(strides) else None for i in at) or None)


def _shown_at(name: str) -> tuple[int, ...]:
    """The arguments a row of op ``name`` shows; () for the oneDNN ops (a packed weight)."""
    op = name.removeprefix("aten::")
    if name in GEMM_OPS and op in GEMM_OPERANDS:
        return GEMM_OPERANDS[op]
    if name in CONV_OPS:
        return _CONV_SHOWN.get(name, ())
    if name in ATTENTION_OPS:
        return (1, 2, 3, 0) if "backward" in op else (0, 1, 2)  # a backward's grad_out last
    return ()


def _strides(dims: Any, strides: Any) -> str:
    """An argument's strides (``1x96``) where they are not the contiguous ones of its size; ""
    where they are, or are not recorded."""
    if not isinstance(dims, tuple) or not isinstance(strides, tuple) or len(dims) != len(strides) \
            or not all(isinstance(v, int) for v in dims + strides):
        return ""
    return "" if contiguous(list(dims), list(strides)) else "x".join(map(str, strides))


def _described(name: str, ts: list[Tensor | None], concrete: Any, n: int,
               marks: list[str]) -> Described | None:
    if name in ONEDNN:  # a packed weight's strides say nothing of the product: shapes alone
        return _onednn(name, ts, _values(concrete, n) or [""] * n)
    if name in GEMM_OPS:
        return _gemm(name, ts, marks)
    values = _values(concrete, n)
    if values is None:
        return None
    call = CallArgs(name, True, values, {}, tensors=ts)
    if name in CONV_OPS:
        return _conv(name, call, marks)
    if name in ATTENTION_OPS:
        return _attention(name, call, marks)
    return None


def _tensor(dims: Any, dtype: Any) -> Tensor | None:
    if not isinstance(dims, tuple) or not dims or not all(isinstance(d, int) for d in dims):
        return None
    return Tensor(tuple(dims), dtype if isinstance(dtype, str) else None)


def _values(concrete: Any, n: int) -> list[str] | None:
    """The scalar arguments' values as written ("" for a tensor); None where not recorded."""
    if not isinstance(concrete, tuple) or len(concrete) < n:
        return None
    return [v if isinstance(v, str) else "" for v in concrete]


def _dims(shape: tuple[int, ...] | None) -> str:
    return "x".join(map(str, shape)) if shape is not None else "?"


def _shape(t: Tensor | None) -> str:
    return _dims(t.shape if t is not None else None)


def _operand(ts: list[Tensor | None], marks: list[str], i: int) -> str:
    """Argument ``i``'s shape, with its strides where they are not the contiguous ones."""
    return _shape(ts[i]) + (STRIDES.format(marks[i]) if i < len(marks) and marks[i] else "")


# the integer types a trace names as C++ does
_INTEGER = {"signed char": "int8", "unsigned char": "uint8"}


def _kinds(ts: list[Tensor | None], at: tuple[int, ...]) -> str:
    kinds = {float_kind(t.dtype) or _INTEGER.get(str(t.dtype)) or str(t.dtype)
             for i in at if i < len(ts) and (t := ts[i]) is not None}
    return "/".join(sorted(kinds))


def _gemm(name: str, ts: list[Tensor | None], marks: list[str]) -> Described | None:
    op = name.removeprefix("aten::")
    flops = gemm_flops(op, ts)
    if flops is None:
        return None
    at = GEMM_OPERANDS[op]
    return Described(name, " @ ".join(_operand(ts, marks, i) for i in at), _kinds(ts, at), flops)


def _conv(name: str, call: CallArgs, marks: list[str]) -> Described | None:
    forward = name == "aten::convolution"
    flops, _ = conv_work(call) if forward else conv_backward_work(call)
    if flops is None or len(call.args) < (9 if forward else 11):
        return None
    if forward:
        shape = conv_output(call)
        if not _positive(shape):
            return None
        groups, transposed, out, note = call.args[8], call.args[6], _dims(shape), ""
    else:
        groups, transposed, out = call.args[9], call.args[7], _operand(call.tensors, marks, 0)
        asked = [g for g, v in zip(_GRADIENTS, call.args[10].split(","), strict=False) if "True" in v]
        note = f", grad of {', '.join(asked)}" if asked else ""
    at = _CONV_SHOWN[name]
    extra = "".join(part for part, on in ((f", groups {groups}", groups.strip() not in ("", "1")),
                                          (", transposed", transposed.strip() == "True")) if on)
    ts = call.tensors
    shapes = f"{_operand(ts, marks, at[0])} * {_operand(ts, marks, at[1])} -> {out}{extra}{note}"
    return Described(name, shapes, _kinds(call.tensors, at), flops)


def _positive(shape: tuple[int, ...] | None) -> bool:
    """Whether a shape worked out from recorded values is one (no size of 0 or below)."""
    return shape is not None and min(shape, default=0) > 0


def _attention(name: str, call: CallArgs, marks: list[str]) -> Described | None:
    op = name.removeprefix("aten::")
    causal = is_causal(op, call)
    flops, _ = attention_work(op, call.tensors, causal)
    if flops is None:
        return None
    at = _shown_at(name)
    q, k, v = (_operand(call.tensors, marks, i) for i in at[:3])
    shapes = f"q {q}, kv {k}" if k == v else f"q {q}, k {k}, v {v}"
    if len(at) > 3:  # a backward: its output's gradient, with its strides (a layout apart)
        shapes += f", grad {_operand(call.tensors, marks, at[3])}"
    return Described(name, shapes + (", causal" if causal else ""), _kinds(call.tensors, at), flops)


def _onednn(name: str, ts: list[Tensor | None], values: list[str]) -> Described | None:
    """A oneDNN convolution or linear of CPU freezing, counted as ``breakdown`` counts its call."""
    overload = ONEDNN[name].get(len(ts))
    if overload is None:
        return None
    namespace, op = name.split("::")
    call = CallArgs(f"torch.ops.{namespace}.{op}.{overload}", True, values, {}, tensors=ts)
    work, out = onednn_work(call), onednn_output(call)
    key = (op, overload)
    places = ONEDNN_CONV.get(key) or ONEDNN_LINEAR[key]
    if work is None or work.flops is None or not _positive(out):
        return None
    x, w = (ts[i] for i in places[:2])
    shown = _dims(out)
    if key in ONEDNN_CONV:
        shapes = f"{_shape(x)} * {_shape(w)} -> {shown}"
        groups = values[places[2] + 3] if places[2] + 3 < len(values) else ""
        shapes += f", groups {groups}" if groups.strip() not in ("", "1") else ""
    else:  # the weight is (N, K): shown as the product's second operand, K x N
        n, k = w.shape if w is not None and w.shape is not None and len(w.shape) == 2 else (0, 0)
        shapes = f"{_shape(x)} @ {k}x{n}"
    return Described(name, shapes, _kinds(ts, places[:2]), work.flops)
