"""End to end on CPU: the FLOPs and bytes the roofline holds each GEMM, attention call,
convolution and C++ kernel of two real models to, against the textbook formulas computed here
from the models' own layer sizes (not from the tool's counting): 2·M·N·K for a GEMM,
2·N·Cout·Hout·Wout·Cin·Kh·Kw for a convolution (its backward: that once per gradient asked
for), 4·B·H·L·S·D for attention's forward (causal: the L(L+1)/2 scores it keeps), and bytes as
the tensors' sizes. The runs are the session's shared ``transformer_train`` and
``densenet_train`` (``models/transformer_block.py``, ``models/densenet.py``, --train)."""

from __future__ import annotations

import pytest

F32 = 4  # bytes
# models/transformer_block.py's defaults: Block(dim=128, heads=4, mlp_ratio=4), x of 8 x 64 x 128
B, T, DIM, HEADS, HIDDEN = 8, 64, 128, 4, 512
TOKENS, HEAD_DIM = B * T, DIM // HEADS
KEPT_SCORES = T * (T + 1) // 2  # is_causal, as many queries as keys
# (in, out) of qkv, proj, fc1, fc2
LINEARS = [(DIM, 3 * DIM), (DIM, DIM), (DIM, HIDDEN), (HIDDEN, DIM)]


def _extern_counts(g, op: str) -> list[tuple[float, float]]:
    """(bytes, FLOPs) of each call of ``op`` in graph ``g``, in the module's order."""
    externs = [s for s in g.sites if s.extern]
    return [tuple(c) for s, c in zip(externs, g.site_counts, strict=True) if s.kernel == op]


def _graphs(fixture):
    result, _, error = fixture
    assert error is None, error
    return {g.id: g for g in result.measured()}


@pytest.mark.slow
@pytest.mark.e2e
def test_the_transformers_gemms_and_attention_count_the_formulas(transformer_train):
    g = _graphs(transformer_train)
    fwd, bwd = g["0-forward"], g["0-backward"]
    gemm = sorted((F32 * (o + TOKENS * i + i * o + TOKENS * o), 2 * TOKENS * i * o) for i, o in LINEARS)
    assert sorted(_extern_counts(fwd, "aten::addmm")) == gemm  # bias, input, weight, output
    # the backward: each linear's input gradient and weight gradient, the same M·N·K each
    assert sorted(f for _, f in _extern_counts(bwd, "aten::mm")) == sorted(2 * [f for _, f in gemm])
    qkv = B * HEADS * T * HEAD_DIM  # one of q, k, v or the output
    attention = 4 * B * HEADS * KEPT_SCORES * HEAD_DIM  # Q·Kᵀ and P·V, 2 FLOPs a multiply-add
    assert 4 * B * HEADS * T * T * HEAD_DIM == 16_777_216  # the full square, for scale
    [(nbytes, flops)] = _extern_counts(fwd, "aten::_scaled_dot_product_flash_attention_for_cpu")
    assert (nbytes, flops) == (F32 * (4 * qkv + B * HEADS * T), attention)  # q, k, v, out, logsumexp
    [(_, flops)] = _extern_counts(bwd, "aten::_scaled_dot_product_flash_attention_for_cpu_backward")
    assert flops == 5 * attention // 2  # scores again, dP, dV, dQ, dK


@pytest.mark.slow
@pytest.mark.e2e
def test_a_cpp_kernels_bytes_are_its_buffers(transformer_train):
    """The forward's GELU kernel reads fc1's output (tokens x hidden) and writes its own."""
    fwd = _graphs(transformer_train)["0-forward"]
    [gelu] = [k for k in fwd.kernels if k.name.startswith("cpp_") and "gelu" in k.name]
    assert (gelu.bytes, gelu.flops) == (2 * F32 * TOKENS * HIDDEN, None)


def _densenet_convs() -> list[tuple[int, int, int, int]]:
    """(in channels, out channels, kernel size, height = width) of models/densenet.py's
    convolutions with its defaults (growth 8, 3 layers a block, 2 blocks, 32 x 32 input)."""
    growth, hw = 8, 32
    ch = 2 * growth
    convs = [(3, ch, 3, hw)]
    for block in range(2):
        for _ in range(3):
            convs += [(ch, 2 * growth, 1, hw), (2 * growth, growth, 3, hw)]
            ch += growth
        if block == 0:
            convs.append((ch, ch // 2, 1, hw))
            ch, hw = ch // 2, hw // 2
    return convs


@pytest.mark.slow
@pytest.mark.e2e
def test_densenets_convolutions_count_the_formulas(densenet_train):
    n = 2  # its batch
    g = _graphs(densenet_train)
    convs = _densenet_convs()
    flops = [2 * n * co * hw * hw * ci * k * k for ci, co, k, hw in convs]  # stride 1, same padding
    x, w, y = ([F32 * n * ci * hw * hw for ci, _, _, hw in convs], [F32 * co * ci * k * k for ci, co, k, _ in convs],
               [F32 * n * co * hw * hw for _, co, _, hw in convs])
    assert _extern_counts(g["0-forward"], "aten::convolution") == [
        (x[i] + w[i] + y[i], flops[i]) for i in range(len(convs))]
    # backward, in any order: the stem's input needs no gradient, so only its weight's (grad_output,
    # input, grad_weight); every other: grad_output, input, weight, grad_input and grad_weight
    stem = (y[0] + x[0] + w[0], flops[0])
    rest = [(y[i] + 2 * x[i] + 2 * w[i], 2 * flops[i]) for i in range(1, len(convs))]
    assert sorted(_extern_counts(g["0-backward"], "aten::convolution_backward")) == sorted([stem, *rest])
