"""What a compiled backward's ``convolution_backward`` moves: the tensors it reads and the
gradients it writes, by its output_mask (no torch)."""

from __future__ import annotations

import pytest

from inductor_bench.core.graph_work import call_work
from inductor_bench.core.modparse import parse_module


def _module(mask: str) -> str:
    """timm's vit_tiny_patch16_224 at 64x64, batch 1 (timm 1.0.31, torch 2.13.0 CPU): the patch
    embedding's backward, as its compiled module calls it (the image needs no gradient)."""
    return "\n".join([
        "def call(args):",
        "    primals_1, primals_2, buf403 = args",
        "    assert_size_stride(primals_1, (1, 3, 64, 64), (12288, 1, 192, 3), 'input')",
        "    assert_size_stride(primals_2, (192, 3, 16, 16), (768, 1, 48, 3), 'input')",
        "    assert_size_stride(buf403, (1, 17, 192), (3264, 192, 1), 'input')",
        "    buf404 = torch.ops.aten.convolution_backward.default(reinterpret_tensor(buf403, (1, 192, 4, 4), "
        f"(192, 1, 768, 192), 192), primals_1, primals_2, [192], (16, 16), (0, 0), (1, 1), False, (0, 0), 1, {mask})",
        "",
        "def get_args():",
        "    primals_1 = rand_strided((1, 3, 64, 64), (12288, 1, 192, 3), device='cpu', dtype=torch.float32)",
        "    primals_2 = rand_strided((192, 3, 16, 16), (768, 1, 48, 3), device='cpu', dtype=torch.float32)",
        "    buf403 = rand_strided((1, 17, 192), (3264, 192, 1), device='cpu', dtype=torch.float32)",
        "    return [primals_1, primals_2, buf403]", ""])


GRAD, IMAGE, WEIGHT, BIAS = 192 * 4 * 4 * 4, 3 * 64 * 64 * 4, 192 * 3 * 16 * 16 * 4, 192 * 4
CONV = 2 * 192 * 4 * 4 * 3 * 16 * 16  # 4,718,592: the forward's FLOPs


@pytest.mark.parametrize("mask,moved,flops", [
    # the weight's and the bias's gradients, from grad_output and the image: the weight is not read
    ("[False, True, True]", GRAD + IMAGE + WEIGHT + BIAS, CONV),
    # grad_input too: the weight is read for it
    ("[True, True, True]", GRAD + IMAGE + WEIGHT + IMAGE + WEIGHT + BIAS, 2 * CONV),
    ("[True, False, False]", GRAD + IMAGE + WEIGHT + IMAGE, CONV),
])
def test_a_convolution_backward_moves_what_its_gradients_need(mask, moved, flops):
    module = _module(mask)
    (_, work), = call_work(parse_module(module), module)
    assert (work.bytes, work.flops) == (moved, flops)
