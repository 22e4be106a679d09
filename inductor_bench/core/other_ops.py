"""What extern calls of ATen ops other than convolutions and attention compute (pure; no torch).

- **GEMMs** (``mm``, ``addmm``, ``bmm``, ``baddbmm``, ``_int_mm``, the fp8 ``_scaled_mm``, and
  the grouped GEMMs of mixtures of experts, ``_grouped_mm`` and ``_scaled_grouped_mm``):
  2·M·N·K, 2·B·M·N·K for batches (the bias add is not counted), held against the type of their
  two operands (not a float32 scale's). A grouped GEMM's groups split one of its dimensions
  among them, by offsets known only at run time, but their sum is the tensor's: a 2-D by 3-D
  one (tokens sorted by expert, one weight per expert) does 2·(all tokens)·K·N, a 2-D by 2-D
  one (groups along K) 2·M·(all of K)·N, a 3-D by 2-D one 2·M·K·(all of N).
- **Weight-only quantized GEMMs** (torchao's int8 and int4 weight-only linears:
  ``_weight_int8pack_mm``, ``_weight_int4pack_mm`` and its CPU and scaled forms): activations
  (M, K) of a float type by a packed integer weight, 2·M·N·K with N from the result (the packed
  int4 weight's shape is a tiling, not (N, K)), held against the activations' type; oneDNN's
  int8 linear (``qlinear_pointwise``) the same way, in integer operations (``core/extern_work.py``).
- **Views** (``view_as_real``, ``view_as_complex``, ``as_strided`` ...) move no data: Inductor
  calls one where it cannot express the view itself (a complex tensor's), and its time is the
  call's own cost. Counted as 0 bytes, they get no % of a limit (``core/ceilings.py``).
- **Fused layers** that ``nn.TransformerEncoderLayer`` and ``nn.MultiheadAttention`` run in
  inference (their fast path: ``_transformer_encoder_layer_fwd``,
  ``_native_multi_head_attention``), which Inductor calls as they are: their projections'
  GEMMs, 2·(tokens)·(in)·(out) each, and attention's two products, 4·B·L·S·E. Their norms,
  softmax and activations are not counted; judged on their bytes alone they were "2% of the
  bandwidth" for a layer that is GEMMs.
- **Dense linear algebra** by LAPACK's operation counts: an LU factorisation of an n x n matrix
  (2/3)·n³ (``linalg_lu_factor_ex``), and ``_linalg_solve_ex`` that plus 2·n²·k to solve for k
  right-hand sides; a Cholesky factorisation n³/3; a triangular solve n²·k; per matrix of a
  batch; an inverse 2·n³, a determinant its LU. Judged on its bytes a 256 x 256 solve was "1%
  of the bandwidth". Decompositions without a fixed count (``svd``, ``eigh``, ``eig``, ``qr``,
  the matrix exponential), pairwise distances and recurrent layers are arithmetic whose FLOPs
  are not counted: ``ARITHMETIC_OPS``, which get no % (``core/ceilings.py``), not a memory one.
- **Sorting and searching** (``sort``, ``topk``, ``searchsorted``, ``unique`` ...:
  ``COMPARISON_OPS``) spend their time on comparisons, which are not counted: no % either.
- **Gathers** (``embedding``, ``_embedding_bag``, ``_embedding_bag_forward_only``: an
  ``nn.EmbeddingBag``'s lookups, which Inductor calls as they are) read the rows their indices
  pick, not their whole table: one row per index, at most the table (a row picked twice is
  counted twice; the module cannot say which repeat). Counting the table, 4 bags of 5,120
  lookups in 10,000 x 64 float32 tables were "150% of the bandwidth, in cache".
- **FFTs** (``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r``, what ``torch.fft`` lowers to) by the
  convention FFT benchmarks use (FFTW's, cuFFT's): a complex transform of N points does
  5·N·log₂N FLOPs, a real one 2.5·N·log₂N, once per transform of the batch (N: the product of
  the transformed dimensions' sizes). Their bytes are the tensors' own, as for other ops.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from .buffers import CallArgs, Tensor
from .dtypes import dtype_bytes, float_kind

VIEW_OPS = frozenset({
    "view", "_unsafe_view", "view_as", "view_as_real", "view_as_complex", "as_strided", "alias",
    "_reshape_alias", "expand", "permute", "transpose", "t", "select", "slice", "squeeze",
    "unsqueeze", "unfold", "diagonal", "narrow", "split", "split_with_sizes", "unbind", "detach",
    "real", "imag", "_conj", "_neg_view", "lift_fresh",
})
# the positions of a GEMM's two operands
GEMM_OPERANDS = {"mm": (0, 1), "bmm": (0, 1), "addmm": (1, 2), "baddbmm": (1, 2), "_int_mm": (0, 1),
                 "_scaled_mm": (0, 1), "_grouped_mm": (0, 1), "_scaled_grouped_mm": (0, 1)}
_GROUPED = ("_grouped_mm", "_scaled_grouped_mm")
# per point and log₂ of the points: complex transforms, and real ones (half the work)
_FFT_RATE = {"_fft_c2c": 5.0, "_fft_r2c": 2.5, "_fft_c2r": 2.5}


# ops reading rows of a table (their first argument) that their indices (the second) pick
GATHERS = frozenset({"embedding", "_embedding_bag", "_embedding_bag_forward_only"})


def gathered_bytes(ts: list[Tensor | None]) -> int | None:
    """Of a gather's table (``ts[0]``), the bytes of the rows its indices (``ts[1]``) pick: one
    row per index, at most the whole table; None where a shape or type is unknown."""
    table, indices = (ts + [None, None])[:2]
    if table is None or indices is None or not table.shape or not table.shape[0]:
        return None
    if (elem := dtype_bytes(table.dtype)) is None or table.numel is None or indices.numel is None:
        return None
    return min(indices.numel * (table.numel // table.shape[0]), table.numel) * elem


def is_view(op: str) -> bool:
    return op in VIEW_OPS


# Ops whose tensors are all of one type (torch refuses mixed ones; ``out=`` too): GEMMs, and a
# convolution's input, weight and bias and its backward's gradients
_ONE_TYPE = ("mm", "bmm", "addmm", "baddbmm", "convolution", "convolution_backward")


def typed_alike(op: str, call: CallArgs) -> CallArgs:
    """``call`` with tensors of unsaid type (an element of a tuple result, in torch before
    2.14, or a buffer reused as one) given the type of the others, which torch requires them to
    share: all of a ``_ONE_TYPE`` op's, and attention's query, key, value, output and their
    gradients (4-D; its logsumexp is float32 whatever they are)."""
    alike = _attention_operand if "attention" in op else (lambda t: True) if op in _ONE_TYPE else None
    ts = [t for t in (*call.tensors, call.out, call.returned, *call.returned_items.values())
          if t is not None and alike is not None and alike(t)]
    known = next((t.dtype for t in ts if t.dtype and (op in _ONE_TYPE or float_kind(t.dtype))), None)
    if known is None or all(t.dtype for t in ts):
        return call

    def fill(t: Tensor | None) -> Tensor | None:
        return replace(t, dtype=known) if t is not None and not t.dtype and alike(t) else t
    items = {i: fill(t) for i, t in call.returned_items.items()}
    return replace(call, tensors=[fill(t) for t in call.tensors], out=fill(call.out),
                   returned=fill(call.returned), returned_items=items)


def _attention_operand(t: Tensor) -> bool:
    return t.shape is not None and len(t.shape) == 4


def gemm_operands(op: str, ts: list[Tensor | None]) -> list[Tensor | None]:
    return [ts[i] if i < len(ts) else None for i in GEMM_OPERANDS[op]]


def gemm_flops(op: str, ts: list[Tensor | None]) -> float | None:
    """A GEMM call's FLOPs from its operands' shapes (see the module docstring); None where
    they are not known or not of a form it takes."""
    a, b = (t.shape if t is not None else None for t in gemm_operands(op, ts))
    if a is None or b is None:
        return None
    if len(a) == 2 and len(b) == 2:
        return 2.0 * a[0] * a[1] * b[1]
    if len(a) == 3 and len(b) == 3:
        return 2.0 * a[0] * a[1] * a[2] * b[2]
    if op in _GROUPED and len(a) == 2 and len(b) == 3:
        return 2.0 * a[0] * a[1] * b[2]
    if op in _GROUPED and len(a) == 3 and len(b) == 2:
        return 2.0 * a[1] * a[2] * b[1]
    return None


WEIGHT_ONLY_GEMMS = frozenset({"_weight_int8pack_mm", "_weight_int4pack_mm", "_weight_int4pack_mm_for_cpu",
                               "_weight_int4pack_mm_with_scales_and_zeros", "_dyn_quant_matmul_4bit"})
# linears whose packed weight's shape is a library's own, not (N, K): their N is the result's
PACKED_LINEARS = WEIGHT_ONLY_GEMMS | {"qlinear_pointwise"}


def packed_linear_flops(op: str, call: CallArgs) -> float | None:
    """2·M·N·K of a linear by a packed weight (weight-only quantized, oneDNN's int8 linear): M·K
    the input's elements, N the result's last dimension as the module asserts it
    (``_weight_int8pack_mm``: else its (N, K) weight's)."""
    ts = call.tensors
    x = ts[0] if ts else None
    if x is None or x.numel is None:
        return None
    out = call.returned.shape if call.returned is not None else None
    w = ts[1].shape if len(ts) > 1 and ts[1] is not None else None
    n = out[-1] if out else (w[0] if op == "_weight_int8pack_mm" and w and len(w) == 2 else None)
    return None if n is None else 2.0 * x.numel * n


def other_flops(op: str, call: CallArgs) -> float | None:
    """An FFT's, a fused layer's, a linear-algebra op's or a packed linear's FLOPs; None for
    other ops."""
    if op in PACKED_LINEARS:
        return packed_linear_flops(op, call)
    if op in _FFT_RATE:
        return fft_flops(op, call)
    if op in _FUSED_LAYERS:
        return _fused_layer_flops(op, call.tensors)
    if op in _LINALG:
        return _linalg_flops(op, call)
    return None


_LINALG = ("_linalg_solve_ex", "linalg_lu_factor_ex", "linalg_cholesky_ex", "linalg_solve_triangular",
           "linalg_inv_ex", "_linalg_det", "_linalg_slogdet")
# ATen ops whose time is arithmetic this module does not count (see the module docstring)
ARITHMETIC_OPS = frozenset({
    "_linalg_svd", "_linalg_eigh", "linalg_eig", "_linalg_eigvals", "linalg_qr", "linalg_householder_product",
    "linalg_matrix_exp", "_cdist_forward", "_cdist_backward", "lstm", "gru", "rnn_tanh", "rnn_relu",
    "mkldnn_rnn_layer", "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell",
})


# ATen ops whose time is comparisons (sorting, selecting, searching), not a pass over their
# tensors: judged on their bytes a sort of 256 x 4096 floats was "0.7% of the bandwidth, memory"
# and a binary search of 256 values in as many sorted rows "181%, in cache" (it reads a few
# elements of each row, not the row)
COMPARISON_OPS = frozenset({
    "sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode", "searchsorted",
    "bucketize", "_unique", "_unique2", "unique_dim", "unique_consecutive", "unique_dim_consecutive",
})


ARITHMETIC_WORK, COMPARISON_WORK = "arithmetic", "comparisons"  # what uncounted time is spent on
_UNCOUNTED = {**dict.fromkeys(ARITHMETIC_OPS, ARITHMETIC_WORK),
              **dict.fromkeys(COMPARISON_OPS, COMPARISON_WORK)}


def uncounted_work(op_row: str) -> str | None:
    """What a kernel row's ATen op (``aten::sort #3``: ``sort``) spends its time on where no rule
    counts it, ``ARITHMETIC_WORK`` or ``COMPARISON_WORK``; None for other rows."""
    ns, _, op = op_row.partition("::")
    return _UNCOUNTED.get(op.split(" ")[0]) if ns == "aten" else None


def _linalg_flops(op: str, call: CallArgs) -> float | None:
    ts = call.tensors
    a = ts[0].shape if ts and ts[0] is not None else None
    if a is None or len(a) < 2 or a[-1] != a[-2]:
        return None
    n, batch = a[-1], math.prod(a[:-2])
    if op == "linalg_cholesky_ex":
        return batch * n**3 / 3.0
    if op in ("linalg_lu_factor_ex", "_linalg_det", "_linalg_slogdet"):
        return batch * 2.0 * n**3 / 3.0
    if op == "linalg_inv_ex":  # LU, then n right-hand sides
        return batch * 2.0 * n**3
    b = ts[1].shape if len(ts) > 1 and ts[1] is not None else None
    if b is None:
        return None
    left = "False" not in call.kwargs.get("left", "True")
    k = 1 if len(b) < len(a) else (b[-1] if left else b[-2])  # a vector, or k columns (rows)
    solve = n * n * k
    return batch * (solve if op == "linalg_solve_triangular" else 2.0 * n**3 / 3.0 + 2.0 * solve)


# the positions of (query, key, the weights of the GEMMs after attention's) in a fused layer's
# arguments; the key's projections (K and V) are the thirds of the QKV weight past the first
_FUSED_LAYERS = {
    "_transformer_encoder_layer_fwd": (0, 0, 3, (5, 14, 16)),  # src; qkv, proj, ffn 1 and 2
    "_native_multi_head_attention": (0, 1, 5, (7,)),  # query, key; qkv, proj
}


def _fused_layer_flops(op: str, ts: list[Tensor | None]) -> float | None:
    q_at, k_at, qkv_at, after = _FUSED_LAYERS[op]
    at = (q_at, k_at, qkv_at, *after)
    shapes = [ts[i].shape if i < len(ts) and ts[i] is not None else None for i in at]
    if any(sh is None or len(sh) < 2 for sh in shapes) or len(shapes[0]) > 3:
        return None
    q, k, qkv, *weights = shapes
    batch, lq, e, s = (q[0] if len(q) == 3 else 1), q[-2], q[-1], k[-2]
    flops = 2.0 * batch * (lq * e * (qkv[0] // 3) + s * e * 2 * (qkv[0] // 3))  # Q, then K and V
    flops += 4.0 * batch * lq * s * e  # Q·Kᵀ and P·V, over all heads
    return flops + sum(2.0 * batch * lq * w[0] * w[1] for w in weights)


def fft_flops(op: str, call: CallArgs) -> float | None:
    """An FFT call's FLOPs (see the module docstring); None for other ops, or where its input's
    shape or the dimensions it transforms are not known."""
    rate = _FFT_RATE.get(op)
    x: Tensor | None = call.tensors[0] if call.tensors else None
    if rate is None or x is None or x.shape is None or len(call.args) < 2:
        return None
    dims = [int(d) for d in re.findall(r"-?\d+", call.args[1])]
    shape = list(x.shape)
    if not dims or any(not -len(shape) <= d < len(shape) for d in dims):
        return None
    dims = [d % len(shape) for d in dims]
    if op == "_fft_c2r":  # the real output's last transformed size is its own argument
        last = _int_arg(call, 3, "last_dim_size")
        if last is None:
            return None
        shape[dims[-1]] = last
    points = math.prod(shape[d] for d in dims)
    if points <= 1:
        return 0.0
    return rate * math.prod(shape) * math.log2(points)


def _int_arg(call: CallArgs, position: int, name: str) -> int | None:
    """An integer argument, by keyword or position; a size symbol at the harness's size."""
    if name not in call.kwargs and position < len(call.values) and call.values[position] is not None:
        return call.values[position]
    text = call.kwargs.get(name) if name in call.kwargs else (
        call.args[position] if position < len(call.args) else None)
    return int(text) if text is not None and re.fullmatch(r"\d+", text.strip()) else None
