"""What each kernel of a graph has to move and compute: bytes and FLOPs per iteration, counted
from the run directory's files alone (pure; no torch), so ``report --reanalyze`` counts again.

- **Triton kernels**: Inductor's own ``kernel_num_gb`` (and ``kernel_flop``, templates) where
  the kernel file the run saved records it; else from the buffers the module passes it.
- **C++ and Triton kernels from their buffers**: every tensor argument once, at its element
  type (the kernel's signature says it: ``const float*``, ``'*bf16'``), and the arguments the
  kernel both reads and writes (``in_out_ptr*``) twice, and of a buffer larger than the
  kernel's iteration space (a slice; an embedding table, a KV cache written at one position)
  only the part it reaches (``core/kernel_space.py``): the rules Inductor's own
  ``estimate_kernel_num_bytes`` follows. A C++ GEMM template (``gemm_m64n512k256``) does
  2·M·N·K FLOPs, the C++ flex attention template with one block over all queries and keys
  2·B·H·L·S·(E + Ev) (``conv_attention.flex_template_flops``), under a block mask of several
  blocks the blocks the run gave it (``flex_masked_flops``). Other generated kernels: no
  FLOP count (their arithmetic is a few operations per element; the memory side is what bounds
  them).
- **extern calls** from their argument shapes: GEMMs (``mm``, ``bmm``, ``_int_mm``'s integer
  operations, fp8 ``_scaled_mm``, grouped) 2·M·N·K per product (``core/other_ops.py``),
  ``convolution`` 2·(output elements)·(weight elements per output channel) (transposed: 2·(input
  elements)·(weight elements per input channel), as torch's ``flop_counter``),
  ``convolution_backward`` that once per gradient asked for, scaled-dot-product attention
  4·B·H·L·S·E forward and the five products of its backward (causal, with L = S: of the
  L(L+1)/2 scores the mask keeps); bytes are every tensor argument and
  the result once (attention's: its output and float32 logsumexp, or the three gradients;
  another op's: the tensor it returns, as the module asserts it after the call; none where the
  module says nothing of its size, as torch 2.5 and 2.6 for a custom op). The oneDNN and
  MKL ops of CPU freezing likewise: ``mkldnn._convolution_pointwise`` (and its fused ``binary``
  forms) as a convolution, ``mkldnn._linear_pointwise`` and ``mkl._mkl_linear`` as 2·M·N·K, the
  latter's weight read as much as the original weight holds (its packed copy is a padded buffer
  of MKL's layout); and of PT2E's int8 quantization, ``onednn.qlinear_pointwise`` as 2·M·N·K and
  ``onednn.qconv_pointwise`` as a convolution, in integer operations (their N and output from
  the result the module asserts). Weight-only quantized GEMMs (``_weight_int8pack_mm``, the
  int4 ones) 2·M·N·K in their activations' type. FFTs by the FFT benchmarks' convention, the fused layers of
  ``nn.Transformer*`` inference, views as no bytes (``core/other_ops.py``). Other ops, custom
  ops among them: no FLOP count.

A count is per iteration: the sum over the kernel's (or the op's) calls in ``call()``.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

from .buffers import CallArgs, Tensor
from .conv_attention import (
    attention_work,
    conv_backward_unread,
    conv_backward_work,
    conv_output_shape,
    conv_work,
    dims,
    elem_bytes,
    flex_masked_flops,
    flex_template_flops,
    ints,
    is_causal,
)
from .cpp_buffers import cpp_module_calls
from .cppwrapper import is_cpp_wrapper, shim_op
from .dtypes import float_kind, int8_operands
from .kernel_space import elements_reached, reach
from .modparse import CPP_SIGNATURE, KernelInfo, ModuleInfo
from .module_calls import module_calls
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

# How a count was made, as the report says it.
FROM_INDUCTOR = "Inductor's kernel_num_gb"
FROM_BUFFERS = "its buffers"
FROM_SHAPES = "its shapes"
# A generated kernel that draws random numbers (dropout, rand, bernoulli): a counter-based
# generator's rounds per element that no FLOP count holds. On the host they are its time: a
# small BERT's training kernel of add, dropout and LayerNorm moved 562 kB in 0.6 ms (0.9 GB/s,
# 2% of the bandwidth), its inference kernel of add and LayerNorm 1.6 MB at 52 GB/s. Said
# beside how its count was made.
RANDOM_NOTE = "draws random numbers"
_DRAWS_RANDOM = re.compile(  # Inductor's C++ and Triton codegen of rand, randn, randint64
    r"\b(?:normalized_rand_cpu|randn_cpu|randint64_cpu)\(|\btl\.randn?\(|"
    r"\btriton_helpers\.(?:randint64|rand_eager_kernel)\(")


def with_random_note(source: str, kernel_source: str) -> str:
    """``source``, with ``RANDOM_NOTE`` after it where the kernel draws random numbers."""
    return noted(source, _draws_random_source(kernel_source))


@functools.lru_cache(maxsize=512)
def _draws_random_source(kernel_source: str) -> bool:
    """Searched once per kernel however often the module calls it (a layer's kernel, per layer)."""
    return _DRAWS_RANDOM.search(kernel_source) is not None


def noted(source: str, random: bool) -> str:
    """How a count was made, as ``KernelStat.work_from`` holds it: ``source``, and the note."""
    return f"{source}; {RANDOM_NOTE}" if random else source


def draws_random(work_from: str | None) -> bool:
    return RANDOM_NOTE in (work_from or "")


def counted_from(work_from: str | None) -> str:
    """How the count was made, without the note (the roofline table's column)."""
    return (work_from or "").split("; ")[0]


@dataclass
class Work:
    """One call's (or one kernel's, per iteration) bytes and FLOPs."""

    bytes: float | None
    flops: float | None
    compute: str | None  # peaks.COMPUTE_TYPES, the type its FLOP/s is held against
    source: str  # FROM_*

    def plus(self, other: Work) -> Work:
        return Work(_add(self.bytes, other.bytes), _add(self.flops, other.flops),
                    self.compute or other.compute, self.source)


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _nbytes(t: Tensor | None, dtype: str | None = None) -> int | None:
    return None if t is None else t.nbytes(dtype)


# -- generated kernels -------------------------------------------------------------------------

_TRITON_SIGNATURE = re.compile(r"'signature':\s*\{(?P<body>[^}]*)\}")
_TRITON_PARAM = re.compile(r"'(?P<name>\w+)':\s*'(?P<type>[^']+)'")
_GEMM_NAME = re.compile(r"gemm_m(?P<m>\d+)n(?P<n>\d+)k(?P<k>\d+)")


def kernel_params(k: KernelInfo) -> list[tuple[str, str]] | None:
    """(name, element type) of a generated kernel's pointer parameters, in order, with the
    non-pointer ones as (name, "") so positions match the call; None: signature not found."""
    if k.kind == "cpp":
        m = CPP_SIGNATURE.search(k.source)
        if m is None:
            return None
        out = []
        for p in (x.strip() for x in m.group("params").split(",") if x.strip()):
            typ, _, name = p.rpartition(" ")
            out.append((name.strip("*& "), typ.replace("const", "").strip(" *") if "*" in p else ""))
        return out
    m = _TRITON_SIGNATURE.search(k.source)
    if m is None:
        return None
    return [(pm.group("name"), pm.group("type")[1:] if pm.group("type").startswith("*") else "")
            for pm in _TRITON_PARAM.finditer(m.group("body")) if pm.group("type") != "constexpr"]


def generated_work(k: KernelInfo, call: CallArgs, params: list[tuple[str, str]] | None,
                   reached: tuple[int | None, dict[str, int]], blocks: int | None = None) -> Work:
    """A generated kernel's bytes from the buffers of one call (see the module docstring);
    ``params``: its ``kernel_params``; ``reached``: its ``kernel_space.reach`` at this call's
    sizes (a slice or gather of a larger buffer); ``blocks``: a masked flex attention's blocks
    in this call, as the run gave them (``conv_attention.flex_masked_flops``)."""
    source = with_random_note(FROM_BUFFERS, k.source)
    if params is None:
        return Work(None, None, None, source)
    total = 0
    types: list[str] = []
    read: list[str] = []  # the element types of what it reads, in order
    space, indexes = reached
    for (name, dtype), t in zip(params, call.tensors, strict=False):
        if not dtype:
            continue
        n = _nbytes(t, dtype)
        if n is None:
            return Work(None, None, None, source)
        if t is not None and t.held:
            n = n // t.held * elements_reached(t.held, space, indexes.get(name, 1))
        total += n * (2 if name.startswith("in_out_ptr") else 1)
        if not name.startswith("out_ptr") and dtype:
            read.append(dtype)
            if kind := float_kind(dtype):
                types.append(kind)
    compute = INT8 if int8_operands(read) else compute_type(types)
    return Work(float(total), _template_flops(k, blocks), compute, source)


def kernel_values(params: list[tuple[str, str]] | None, call: CallArgs) -> dict[str, int]:
    """A generated kernel's integer parameters (``ks0``, ``xnumel``) at the values this call
    passes them, where they are sizes the module knows."""
    return {name: v for (name, dtype), v in zip(params or [], call.values, strict=False)
            if not dtype and v is not None}


def _template_flops(k: KernelInfo, blocks: int | None = None) -> float | None:
    for name in (k.name, *k.record_names):
        if (m := _GEMM_NAME.search(name)) is not None:
            return 2.0 * int(m.group("m")) * int(m.group("n")) * int(m.group("k"))
    if not is_cpp_flex(k):
        return None
    whole = flex_template_flops(k.source)
    return whole if whole is not None or blocks is None else flex_masked_flops(k.source, blocks)


def is_cpp_flex(k: KernelInfo) -> bool:
    """Inductor's C++ flex attention template."""
    return k.kind == "cpp" and "kvBlockSize" in k.source


# -- extern calls ------------------------------------------------------------------------------

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
    sizes = [_nbytes(t) for t in read]
    moved = None
    if out is not None and sizes and all(n is not None for n in sizes):
        moved = float(sum(n for n in sizes if n is not None) + math.prod(out) * elem_bytes(x))
    kinds = [k for t in read if (k := float_kind(t.dtype))]
    return Work(moved, flops, compute_type(kinds), FROM_SHAPES)


def extern_work(call: CallArgs) -> Work:
    """An extern call's bytes and FLOPs from its argument shapes (see the module docstring)."""
    if (onednn := onednn_work(call)) is not None:
        return onednn
    op = extern_op(call.name)
    if is_view(op):
        return Work(0.0, None, None, FROM_SHAPES)
    call = typed_alike(op, call)
    tensors = [t for t in call.tensors if t is not None]
    sizes = [_nbytes(t) for t in tensors] + ([_nbytes(call.out)] if call.out is not None else [])
    known = [n for n in sizes if n is not None]
    moved = float(sum(known)) if known and len(known) == len(sizes) else None
    if moved is not None and op in GATHERS and (rows := gathered_bytes(call.tensors)) is not None:
        moved += rows - (_nbytes(call.tensors[0]) or 0)  # the rows its indices pick, not the table
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
        n = _nbytes(call.returned)
        return None if n is None else float(n)
    if call.returned_items:
        return float(sum(n for t in call.returned_items.values() if (n := _nbytes(t)) is not None))
    return None if call.result else 0.0


def call_work(module: ModuleInfo, text: str, fixed: dict[str, int] | None = None,
              blocks: dict[str, list[int | None]] | None = None) -> list[tuple[CallArgs, Work]]:
    """Every call of ``call()`` with what it moves and computes (at ``fixed``'s sizes where
    given; a masked flex attention's calls at ``blocks``, kernel -> the blocks of each of its
    calls in order, ``runner/flex_blocks.py``)."""
    out = []
    met: dict[str, int] = {}  # calls of each kernel so far
    reached: dict[tuple, tuple[int | None, dict[str, int]]] = {}  # per kernel and sizes, however often called
    read = cpp_module_calls if is_cpp_wrapper(text) else module_calls
    calls = read(text, module, result_shape=onednn_output, fixed=fixed)
    for c in calls:
        if c.extern:
            out.append((c, extern_work(c)))
            continue
        k = module.kernels[c.name]
        params = kernel_params(k)
        values = kernel_values(params, c)
        key = (c.name, *sorted(values.items()))
        if key not in reached:
            reached[key] = reach(k.source, k.kind, values)
        nth = met[c.name] = met.get(c.name, -1) + 1
        of_kernel = (blocks or {}).get(c.name) or []
        mask = of_kernel[nth] if nth < len(of_kernel) else None
        out.append((c, generated_work(k, c, params, reached[key], mask)))
    return out
