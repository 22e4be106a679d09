"""`analyze` of a trace recorded with ``record_shapes=True``: convolutions and scaled-dot-product
attention by shape, their FLOPs counted from the recorded shapes and scalar values (``Concrete
Inputs``). Checked on calls worked out by hand (synthetic), on a hand-built H100 trace
(synthetic) and on a CPU loop profiled in the test, against torch's own ``flop_counter`` and the
raw JSON the profiler wrote."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from inductor_bench.core.analyze import analyze_file
from inductor_bench.core.peaks import FP16, FP32, TF32
from inductor_bench.core.recorded_shapes import describe
from inductor_bench.core.shaped_ops import library_kernel
from inductor_bench.core.typical_step import steady_shaped_ops
from inductor_bench.render.analyze import render_analyze

from .test_analyze_regions import _x

F = "float"
CONV_TYPES = (F, F, F, "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar")


def _conv(x, w, stride="[1, 1]", padding="[0, 0]", transposed="False", output_padding="[0, 0]", groups="1",
          concrete=True):
    dims = (tuple(x), tuple(w), (w[0],), (), (), (), (), (), ())
    values = ("", "", "", stride, padding, "[1, 1]", transposed, output_padding, groups)
    return describe("aten::convolution", dims, CONV_TYPES, values if concrete else None)


def test_a_strided_padded_convolution():
    d = _conv((4, 3, 32, 32), (16, 3, 3, 3), stride="[2, 2]", padding="[1, 1]")
    # out: (32 + 2 - 2 - 1) // 2 + 1 = 16
    assert d.shapes == "4x3x32x32 * 16x3x3x3 -> 4x16x16x16" and d.dtype == "fp32"
    assert d.flops == 2 * (4 * 16 * 16 * 16) * (3 * 3 * 3)


def test_a_grouped_and_a_transposed_convolution():
    d = _conv((4, 16, 16, 16), (32, 8, 3, 3), padding="[1, 1]", groups="2")
    assert d.shapes == "4x16x16x16 * 32x8x3x3 -> 4x32x16x16, groups 2"
    assert d.flops == 2 * (4 * 32 * 16 * 16) * (8 * 3 * 3)  # each output: 8 channels x 3 x 3
    d = _conv((1, 8, 5, 5), (8, 4, 3, 3), stride="[2, 2]", padding="[1, 1]", transposed="True",
              output_padding="[1, 1]")
    # out: (5 - 1) * 2 - 2 + 2 + 1 + 1 = 10; each input element meets 4 x 3 x 3 weights
    assert d.shapes == "1x8x5x5 * 8x4x3x3 -> 1x4x10x10, transposed"
    assert d.flops == 2 * (8 * 5 * 5) * (4 * 3 * 3)


def test_a_convolution_without_its_scalar_values_is_not_counted():
    assert _conv((4, 3, 32, 32), (16, 3, 3, 3), concrete=False) is None
    assert describe("aten::conv2d", ((4, 3, 8, 8), (16, 3, 3, 3)), (F, F), ("", "")) is None


def test_a_convolutions_backward_counts_the_gradients_it_computes():
    dims = ((4, 32, 16, 16), (4, 16, 16, 16), (32, 16, 3, 3), (), (), (), (), (), (), (), ())
    types = (F, F, F) + ("ScalarList",) * 4 + ("Scalar", "ScalarList", "Scalar", "ScalarList")
    values = ["", "", "", "[32]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[False, True, False]"]
    d = describe("aten::convolution_backward", dims, types, tuple(values))
    per_gradient = 2 * (4 * 32 * 16 * 16) * (16 * 3 * 3)
    assert (d.flops, d.shapes) == (per_gradient, "4x16x16x16 * 32x16x3x3 -> 4x32x16x16, grad of weight")
    values[10] = "[True, True, True]"  # the bias's gradient is a sum: not counted
    d = describe("aten::convolution_backward", dims, types, tuple(values))
    assert (d.flops, d.shapes) == (2 * per_gradient, "4x16x16x16 * 32x16x3x3 -> 4x32x16x16, grad of input, weight, bias")


def _sdpa_cpu(q, k, causal: str):
    dims = (q, k, k, (), (), (), ())
    return describe("aten::_scaled_dot_product_flash_attention_for_cpu", dims,
                    ("c10::BFloat16",) * 3 + ("Scalar", "Scalar", "", ""), ("", "", "", "0.", causal, "", ""))


def test_attention_forward_with_and_without_the_causal_mask():
    b, h, n, e = 2, 4, 64, 32
    d = _sdpa_cpu((b, h, n, e), (b, h, n, e), "False")
    assert (d.shapes, d.dtype, d.flops) == ("q 2x4x64x32, kv 2x4x64x32", "bf16", 4 * b * h * n * n * e)
    d = _sdpa_cpu((b, h, n, e), (b, h, n, e), "True")  # the L(L+1)/2 scores the mask keeps
    assert (d.shapes, d.flops) == ("q 2x4x64x32, kv 2x4x64x32, causal", 4 * b * h * e * n * (n + 1) / 2)
    d = _sdpa_cpu((b, h, 16, e), (b, h, n, e), "True")  # fewer queries than keys: every score
    assert d.flops == 4 * b * h * 16 * n * e


def test_attention_backward_and_the_ops_that_are_not_counted():
    b, h, n, e = 1, 2, 128, 64
    q = (b, h, n, e)
    dims = (q, q, q, q, (), q, (b, h, n), (), (), (), (), (), ())
    values = ("",) * 9 + ("0.", "[True, True, True, False]", "True", "")
    d = describe("aten::_scaled_dot_product_efficient_attention_backward", dims, (F,) * 13, values)
    # five products (the scores again, dP, dV, dQ, dK), of the L(L+1)/2 scores kept
    assert d.flops == 5 * 2 * b * h * e * n * (n + 1) / 2 and d.shapes.endswith(", causal")
    # the flash op runs inside _scaled_dot_product_flash_attention: counted there alone
    assert describe("aten::_flash_attention_forward", (q, q, q), (F,) * 3, ("",) * 9) is None


def test_which_kernels_are_the_librarys_own():
    assert library_kernel("sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc")
    assert library_kernel("void cudnn::cnn::conv2d_grouped_direct_kernel<float>")
    assert library_kernel("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64>>")
    assert library_kernel("fmha_cutlassB_f32_aligned_64x64_k64_sm80")
    assert not library_kernel("void cudnn::ops::nchwToNhwcKernel<float, float, float, true>")
    assert not library_kernel("void at::native::vectorized_elementwise_kernel<4, FillFunctor<float>>")


def _op(name, ts, dur, dims, types, values):
    return _x("cpu_op", name, ts, dur, **{"Input Dims": dims, "Input type": types, "Concrete Inputs": values})


def _launched(kernel, at, ts, dur, corr):
    return [_x("cuda_runtime", "cudaLaunchKernel", at, 1, correlation=corr),
            _x("kernel", kernel, ts, dur, tid=7, pid=0, correlation=corr)]


XMMA_BF16 = "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64"
XMMA_TF32 = "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize64x64x8"
BF = "c10::BFloat16"


def _device_step(t: float, n: int) -> list[dict]:
    """Synthetic, H100: a bf16 convolution (8x64x56x56 * 64x64x3x3, padding 1) whose cuDNN kernel
    takes 40 µs after a 10 µs layout transpose; an fp32 one (1x3x224x224 * 64x3x7x7, stride 2,
    padding 3) in a TF32 kernel of 20 µs; causal bf16 attention (2x8x512x64) of 30 µs."""
    conv = [[8, 64, 56, 56], [64, 64, 3, 3], [], [], [], [], [], [], []]
    stem = [[1, 3, 224, 224], [64, 3, 7, 7], [64], [], [], [], [], [], []]
    q = [2, 8, 512, 64]
    return [
        _x("user_annotation", f"ProfilerStep#{n}", t, 200),
        _op("aten::convolution", t + 10, 20, conv, [BF, BF, ""] + list(CONV_TYPES[3:]),
            ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"]),
        *_launched("void cudnn::ops::nchwToNhwcKernel<__nv_bfloat16>", t + 12, t + 30, 10, n * 10 + 1),
        *_launched(XMMA_BF16, t + 14, t + 40, 40, n * 10 + 2),
        _op("aten::convolution", t + 40, 10, stem, list(CONV_TYPES),
            ["", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "False", "[0, 0]", "1"]),
        *_launched(XMMA_TF32, t + 42, t + 80, 20, n * 10 + 3),
        _op("aten::_scaled_dot_product_flash_attention", t + 60, 10, [q, q, q, [], [], [], []],
            [BF] * 3 + ["Scalar", "Scalar", "Scalar", ""], ["", "", "", "0.", "True", "False", ""]),
        *_launched("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64>>", t + 62, t + 100, 30,
                   n * 10 + 4),
    ]


def test_a_gpu_trace_worked_out_by_hand(tmp_path):
    path = tmp_path / "conv.json"
    path.write_text(json.dumps({"traceEvents": _device_step(0, 1) + _device_step(1000, 2),
                                "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}]}))
    r = analyze_file(path)
    typical = {t.row.shapes: t for t in steady_shaped_ops(r)}
    conv = typical["8x64x56x56 * 64x64x3x3 -> 8x64x56x56"]
    flops = 2 * (8 * 64 * 56 * 56) * (64 * 3 * 3)
    assert (conv.ms, conv.row.flops, conv.compute, conv.peak_tflops) == (pytest.approx(0.050), flops, FP16, 989.0)
    assert conv.tflops == pytest.approx(flops / 50e-6 / 1e12) and conv.other_pct == pytest.approx(20.0)
    assert conv.row.kernel == XMMA_BF16
    stem = typical["1x3x224x224 * 64x3x7x7 -> 1x64x112x112"]  # (224 + 6 - 6 - 1) // 2 + 1 = 112
    assert (stem.compute, stem.peak_tflops, stem.other_pct) == (TF32, 495.0, 0.0)
    assert stem.tflops == pytest.approx(2 * (64 * 112 * 112) * (3 * 7 * 7) / 20e-6 / 1e12)
    attention = typical["q 2x8x512x64, kv 2x8x512x64, causal"]
    assert attention.tflops == pytest.approx(4 * 2 * 8 * 64 * 512 * 513 / 2 / 30e-6 / 1e12)
    assert (attention.compute, attention.row.dtype) == (FP16, "bf16")
    text = render_analyze(r)
    section = text[text.index("Convolutions and attention by shape: record_shapes (steady mean step)"):]
    row = next(line for line in section.splitlines() if "64x64x3x3" in line)
    assert f"{conv.tflops:.3g}" in row and f"{conv.pct:.1f}%" in row and "20.0%" in row


def test_an_sgemm_convolution_is_held_against_the_fp32_peak():
    from inductor_bench.core.shaped_ops import compute_type

    assert compute_type("fp32", "void cudnn::detail::implicit_convolve_sgemm<float, float>") == FP32
    assert compute_type("fp32", "void pytorch_flash::flash_fwd_kernel<>") is None


# --- a CPU loop profiled here, read against torch's flop_counter and the raw JSON ---------------


def _profiled(tmp_path: Path) -> tuple[Path, dict[str, float], float]:
    """A convolution stack and attention, forward and backward, three profiled steps; the
    flop_counter's count of one step per op, and the causal attention's forward FLOPs by hand."""
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile, schedule
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, stride=2, padding=1), torch.nn.ReLU(),
                              torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.Flatten(),
                              torch.nn.Linear(32 * 8 * 8, 10))
    x = torch.randn(4, 3, 16, 16, requires_grad=True)
    q = torch.randn(2, 4, 64, 32, requires_grad=True)

    def step() -> None:
        attn = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        (net(x).sum() + attn.sum()).backward()

    with FlopCounterMode(display=False) as counter:
        step()
    counts = {str(op): float(n) for op, n in counter.get_flop_counts()["Global"].items()}
    path = tmp_path / "cpu.json"
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, schedule=schedule(wait=0, warmup=1, active=3),
                 on_trace_ready=lambda p: p.export_chrome_trace(str(path))) as prof:
        for _ in range(4):
            step()
            prof.step()
    return path, counts, 4 * 2 * 4 * 32 * 64 * 65 / 2


def test_a_profiled_cpu_loop_against_the_flop_counter_and_its_raw_events(tmp_path):
    path, counts, attention_flops = _profiled(tmp_path)
    r = analyze_file(path)
    per_op: dict[str, float] = {}
    for row in r.shaped_ops:
        assert row.calls == [1, 1, 1]  # each shape once a step
        per_op[row.op] = per_op.get(row.op, 0.0) + row.flops
    for op in ("convolution", "convolution_backward", "addmm", "mm"):
        assert per_op[f"aten::{op}"] == counts[f"aten.{op}"], op
    attention = per_op["aten::_scaled_dot_product_flash_attention_for_cpu"]
    assert attention == attention_flops
    assert per_op["aten::_scaled_dot_product_flash_attention_for_cpu_backward"] == attention_flops * 10 / 4
    events = json.loads(path.read_text())["traceEvents"]
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in events if e.get("name", "").startswith("ProfilerStep#")]
    assert len(steps) == 3
    for row in r.shaped_ops:  # the op's own duration, read from the raw events by hand
        us = [sum(e["dur"] for e in events if e.get("cat") == "cpu_op" and e["name"] == row.op
                  and a <= e["ts"] <= b and _shown(e) == row.shapes) for a, b in steps]
        assert row.ms == pytest.approx([u / 1e3 for u in us], rel=1e-9), row.op
    assert math.isclose(sum(r.shaped_ops[0].ms), max(sum(row.ms) for row in r.shaped_ops))


def _shown(e: dict) -> str:
    return describe(e["name"], *(_frozen(e["args"].get(k)) for k in ("Input Dims", "Input type",
                                                                      "Concrete Inputs", "Input Strides"))).shapes


def _frozen(value):
    return tuple(map(_frozen, value)) if isinstance(value, list) else value


def test_impossible_recorded_values_give_no_count():
    """Synthetic: a stride of 0, a kernel larger than its unpadded input, an empty batch."""
    assert _conv((4, 3, 32, 32), (16, 3, 3, 3), stride="[0, 0]") is None
    assert _conv((1, 3, 2, 2), (16, 3, 5, 5)) is None
    assert _conv((0, 3, 8, 8), (16, 3, 3, 3)) is None
    assert describe("aten::convolution", ((4, 3, 8, 8), (16, 3, 3, 3)), CONV_TYPES, ("",) * 3) is None
