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

A count is per iteration: the sum over the kernel's (or the op's) calls in ``call()``. Generated
kernels are counted here, extern calls in ``core/extern_work.py``, and every call of ``call()``
in turn by ``graph_work.call_work``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from .buffers import CallArgs, Tensor
from .conv_attention import flex_masked_flops, flex_template_flops
from .dtypes import float_kind, int8_operands
from .kernel_space import elements_reached
from .modparse import CPP_SIGNATURE, KernelInfo
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


def nbytes(t: Tensor | None, dtype: str | None = None) -> int | None:
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
        n = nbytes(t, dtype)
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
