"""The bytes and FLOPs of a compiled module's extern calls, from their argument shapes."""

from __future__ import annotations

import math

from .buffers import CallArgs
from .conv_attention import (
    attention_work,
    conv_backward_unread,
    conv_backward_work,
    conv_output_shape,
    conv_work,
    dims,
    elem_bytes,
    ints,
    is_causal,
)
from .cppwrapper import shim_op
from .dtypes import float_kind
from .other_ops import (
    GATHERS,
    GEMM_OPERANDS,
    gathered_bytes,
    gemm_flops,
    gemm_operands,
    is_view,
    other_flops,
    typed_alike,
)
from .peaks import INT8, compute_type  # INT8: ``_int_mm``'s integer multiply-adds
from .work import FROM_SHAPES, Work, nbytes


def extern_op(callee: str) -> str:
    """``extern_kernels.addmm`` -> ``addmm``; ``aten.convolution_backward.default`` ->
    ``convolution_backward``; ``aten.view.dtype`` -> ``view``;
    ``torch.ops.aten._scaled_dot_product_flash_attention.default`` ->
    ``_scaled_dot_product_flash_attention``."""
    if (shim := shim_op(callee)) is not None:  # a C++ wrapper's C shim: aoti_torch_cpu_mm_out
        return shim.split("::", 1)[1]
    parts = callee.split(".")
    if parts[:2] == ["torch", "ops"] and len(parts) >= 4:  # torch.ops.<namespace>.<op>[.<overload>]
        return parts[3]
    return parts[1] if len(parts) >= 2 else parts[0]  # extern_kernels.<op>, aten.<op>[.<overload>]


# The oneDNN and MKL ops CPU freezing writes (``torch.ops.mkldnn._convolution_pointwise.default``
# ...), by (op, overload): the positions of X and W, and of padding (stride and dilation follow).
ONEDNN_CONV = {
    ("_convolution_pointwise", "default"): (0, 1, 3),
    ("_convolution_pointwise", "binary"): (0, 2, 4),
    ("_convolution_pointwise_", "binary"): (1, 2, 4),  # in place into its first argument
}
# X and the weight that gives N and K: mkl's packed copy (MKL_W, a flat buffer of MKL's own
# layout, padded far beyond the weight) is what it reads, as much as the original weight (ORI_W)
# holds, so ORI_W stands for it and MKL_W is left out of the bytes
ONEDNN_LINEAR = {
    ("_linear_pointwise", "default"): (0, 1),
    ("_linear_pointwise", "binary"): (0, 2),
    ("_mkl_linear", "default"): (0, 2),
}
_MKL_PACKED = 1  # the position of _mkl_linear's MKL_W
# oneDNN's quantized linear and convolution (PT2E quantization for CPU, frozen): an input of
# uint8 or int8 by a packed int8 weight, into the result the module asserts; integer
# multiply-adds, as _int_mm's
QUANT_CONVS = ("qconv_pointwise", "qconv2d_pointwise")
INT8_GEMMS = ("_int_mm", "qlinear_pointwise", *QUANT_CONVS)


def op_overload(callee: str) -> tuple[str, str]:
    """``torch.ops.mkldnn._convolution_pointwise.binary`` -> (``_convolution_pointwise``,
    ``binary``); an extern without an overload -> (its op, ``default``)."""
    parts = callee.split(".")
    if parts[:2] == ["torch", "ops"] and len(parts) >= 4:
        return parts[3], parts[4] if len(parts) > 4 else "default"
    return extern_op(callee), "default"


def onednn_output(call: CallArgs) -> tuple[int, ...] | None:
    """The shape of what a oneDNN convolution or linear returns (torch 2.5 asserts none);
    None for other ops, or where its shapes are unknown."""
    key = op_overload(call.name)
    ts = call.tensors
    if key in ONEDNN_CONV:
        xi, wi, pi = ONEDNN_CONV[key]
        x, w = (dims(ts[i]) if i < len(ts) else None for i in (xi, wi))
        geometry = [ints(call.args[i]) if i < len(call.args) else [] for i in (pi + 1, pi, pi + 2)]
        return conv_output_shape(x, w, *geometry) if x and w and len(x) == len(w) else None
    if key in ONEDNN_LINEAR:
        xi, wi = ONEDNN_LINEAR[key]
        x, w = (dims(ts[i]) if i < len(ts) else None for i in (xi, wi))
        return (*x[:-1], w[0]) if x and w and len(w) == 2 else None
    return None


def onednn_work(call: CallArgs) -> Work | None:
    """A oneDNN convolution or linear (CPU freezing): 2·(output elements)·(weight elements per
    output channel) and 2·M·N·K; bytes: its tensors and its result once. None for other ops."""
    key = op_overload(call.name)
    places = ONEDNN_CONV.get(key) or ONEDNN_LINEAR.get(key)
    if places is None:
        return None
    ts = call.tensors
    x, w = (ts[i] if i < len(ts) else None for i in places[:2])
    out = onednn_output(call)
    flops = None
    if out is not None and w is not None and w.shape is not None:
        flops = 2.0 * math.prod(out) * math.prod(w.shape[1:])  # a linear's weight: (N, K)
    packed = _MKL_PACKED if key[0] == "_mkl_linear" else None
    read = [t for i, t in enumerate(ts) if t is not None and i != packed]
    sizes = [nbytes(t) for t in read]
    moved = None
    if out is not None and sizes and all(n is not None for n in sizes):
        moved = float(sum(n for n in sizes if n is not None) + math.prod(out) * elem_bytes(x))
    kinds = [k for t in read if (k := float_kind(t.dtype))]
    return Work(moved, flops, compute_type(kinds), FROM_SHAPES)


def extern_work(call: CallArgs) -> Work:
    """An extern call's bytes and FLOPs from its argument shapes (see ``core/work.py``'s docstring)."""
    if (onednn := onednn_work(call)) is not None:
        return onednn
    op = extern_op(call.name)
    if is_view(op):
        return Work(0.0, None, None, FROM_SHAPES)
    call = typed_alike(op, call)
    tensors = [t for t in call.tensors if t is not None]
    sizes = [nbytes(t) for t in tensors] + ([nbytes(call.out)] if call.out is not None else [])
    known = [n for n in sizes if n is not None]
    moved = float(sum(known)) if known and len(known) == len(sizes) else None
    if moved is not None and op in GATHERS and (rows := gathered_bytes(call.tensors)) is not None:
        moved += rows - (nbytes(call.tensors[0]) or 0)  # the rows its indices pick, not the table
    flops: float | None = None
    returned = 0.0
    typed = gemm_operands(op, call.tensors) if op in GEMM_OPERANDS else tensors  # not a GEMM's scales
    kinds = [k for t in typed if t is not None and (k := float_kind(t.dtype))]
    if op in GEMM_OPERANDS:
        flops = gemm_flops(op, call.tensors)
    elif op == "convolution":
        flops, returned = conv_work(call)
    elif op == "convolution_backward":
        flops, returned = conv_backward_work(call)
        moved = None if moved is None else moved - conv_backward_unread(call)
    elif "attention" in op:
        flops, returned = attention_work(op, call.tensors, is_causal(op, call))
    elif op in QUANT_CONVS:
        flops = qconv_flops(call)
    else:
        flops = other_flops(op, call)
    if not returned and call.out is None:
        returned = _returned_bytes(call)  # written once: what the call returns
    if moved is not None:
        moved = None if returned is None else moved + returned
    return Work(moved, flops, INT8 if op in INT8_GEMMS else compute_type(kinds), FROM_SHAPES)


def qconv_flops(call: CallArgs) -> float | None:
    """2·(output elements)·(weight elements per output channel) of oneDNN's quantized
    convolution: the result the module asserts, and the packed weight (its fourth argument in
    every overload), which keeps its logical (C_out, C_in/groups, kh, kw) shape."""
    w = call.tensors[3] if len(call.tensors) > 3 else None
    out = call.returned
    if w is None or w.shape is None or len(w.shape) < 3 or out is None or out.shape is None:
        return None
    return 2.0 * math.prod(out.shape) * math.prod(w.shape[1:])


def _returned_bytes(call: CallArgs) -> float | None:
    """What an extern call's result holds, as the module asserts it: the tensor, or the elements
    of a tuple result that the module takes (those of unstated type left out); None where the
    call returns a tensor whose size the module does not state (a custom op's in torch 2.5 and
    2.6): no byte count rather than one without its output."""
    if call.returned is not None:
        n = nbytes(call.returned)
        return None if n is None else float(n)
    if call.returned_items:
        return float(sum(n for t in call.returned_items.values() if (n := nbytes(t)) is not None))
    return None if call.result else 0.0
