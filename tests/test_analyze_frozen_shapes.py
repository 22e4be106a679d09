"""`analyze`'s GEMMs, convolutions and attention by shape on real CPU traces of compiled models
(``tests/fixtures/cpu_shapes``): under Inductor's freezing, oneDNN's convolutions and MKL's /
oneDNN's linear layers, a residual add fused into a convolution (oneDNN's binary form); in training, ``aten::convolution``, its backward and the CPU flash
attention ops. Every FLOP count is worked out here from the models' layer sizes; every time is
read again from the raw JSON."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from inductor_bench.core.analyze import analyze_file

from .conftest import FIXTURES

HERE = FIXTURES / "cpu_shapes"
STEM = 2 * (4 * 16 * 16 * 16) * (3 * 3 * 3)  # Conv2d(3, 16, 3, stride 2, padding 1) on 4x3x32x32
GROUPED = 2 * (4 * 32 * 16 * 16) * (8 * 3 * 3)  # Conv2d(16, 32, 3, padding 1, groups 2): 8 inputs each
SKIP = 2 * (4 * 32 * 16 * 16) * 16  # Conv2d(16, 32, 1), its sum with the grouped one fused in
HEAD = 2 * 4 * 8192 * 64  # Linear(8192, 64), batch 4
FROZEN = {"mkldnn::_convolution_pointwise": [("4x3x32x32 * 16x3x3x3 -> 4x16x16x16", STEM),
                                             ("4x16x16x16 * 32x8x3x3 -> 4x32x16x16, groups 2", GROUPED)],
          # the binary form, in place into the grouped convolution's result (13 arguments)
          "mkldnn::_convolution_pointwise_": [("4x16x16x16 * 32x16x1x1 -> 4x32x16x16", SKIP)]}
CONV = 2 * (2 * 8 * 16 * 16) * (8 * 3 * 3)  # Conv2d(8, 8, 3, padding 1) on 2x8x16x16
QKV = 2 * 128 * 32 * 96  # Linear(32, 96) on 2 x 64 tokens
ATTENTION = 4 * 2 * 4 * 8 * (64 * 65 / 2)  # causal, 2 x 4 heads x 64 x 8: the 64·65/2 scores kept
# the recorded strides of an operand not contiguous (the raw JSON's "Input Strides"): the compiled
# convolution's channels-last input and weight (and its backward's output gradient), the
# transposed weight of the linear layer and of its input's gradient, attention's q, k and v
# viewed out of the one qkv projection
CL_IN, CL_W, QKV_VIEW = " (strides 2048x1x128x8)", " (strides 72x1x24x8)", " (strides 6144x8x96x1)"
GRAD_VIEW = " (strides 2048x8x32x1)"  # attention's output gradient, heads and tokens transposed
TRAIN = {
    "aten::convolution": [(f"2x8x16x16{CL_IN} * 8x8x3x3{CL_W} -> 2x8x16x16", CONV)],
    "aten::convolution_backward": [
        (f"2x8x16x16{CL_IN} * 8x8x3x3{CL_W} -> 2x8x16x16{CL_IN}, grad of input, weight, bias", 2 * CONV)],
    "aten::addmm": [("128x32 @ 32x96 (strides 1x32)", QKV)],
    # the input's and the weight's gradient
    "aten::mm": [("128x96 @ 96x32", QKV), ("96x128 (strides 1x96) @ 128x32", QKV)],
    "aten::_scaled_dot_product_flash_attention_for_cpu": [
        (f"q 2x4x64x8{QKV_VIEW}, kv 2x4x64x8{QKV_VIEW}, causal", ATTENTION)],
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward": [
        (f"q 2x4x64x8{QKV_VIEW}, kv 2x4x64x8{QKV_VIEW}, grad 2x4x64x8{GRAD_VIEW}, causal", ATTENTION * 10 / 4)],  # five products to two
}


def _check(path: Path, want: dict[str, list[tuple[str, float]]]) -> None:
    r = analyze_file(path)
    got: dict[str, list[tuple[str, float]]] = {}
    for row in r.shaped_ops:
        assert row.calls == [1, 1, 1], (row.op, row.shapes)  # once in each of the 3 steps
        got.setdefault(row.op, []).append((row.shapes, row.flops))
    assert {op: sorted(rows) for op, rows in got.items()} == {op: sorted(rows) for op, rows in want.items()}
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e.get("name", "").startswith("ProfilerStep#"))
    assert len(steps) == 3
    for op in want:  # each op's own durations in each step, read by hand
        us = [sum(e["dur"] for e in events if e.get("cat") == "cpu_op" and e["name"] == op and a <= e["ts"] <= b)
              for a, b in steps]
        ms = [sum(row.ms[k] for row in r.shaped_ops if row.op == op) for k in range(3)]
        assert ms == pytest.approx([u / 1e3 for u in us], rel=1e-9), op


def test_frozen_fp32_onednn_convolutions_and_mkl_linear():
    _check(HERE / "frozen-fp32-torch-2.13.0.json.gz", {**FROZEN, "mkl::_mkl_linear": [("4x8192 @ 8192x64", HEAD)]})


def test_frozen_bf16_onednn_convolutions_and_linear():
    path = HERE / "frozen-bf16-torch-2.13.0.json.gz"
    _check(path, {**FROZEN, "mkldnn::_linear_pointwise": [("4x8192 @ 8192x64", HEAD)]})
    assert {row.dtype for row in analyze_file(path).shaped_ops} == {"bf16"}


def test_a_compiled_training_step_of_convolution_and_attention():
    _check(HERE / "train-torch-2.13.0.json.gz", TRAIN)


def test_the_number_of_arguments_tells_a_onednn_binary_form():
    """Synthetic: the trace names no overload. ``_linear_pointwise.binary`` (X, other, W, B, attr)
    has 5 arguments, the default (X, W, B, attr, scalars, algorithm) 6; a count neither has is
    not counted."""
    from inductor_bench.core.recorded_shapes import describe

    x, w, bf = (4, 8192), (64, 8192), "c10::BFloat16"
    binary = describe("mkldnn::_linear_pointwise", (x, (4, 64), w, (64,), ()), (bf,) * 4 + ("",), ("",) * 5)
    assert (binary.shapes, binary.flops, binary.dtype) == ("4x8192 @ 8192x64", HEAD, "bf16")
    default = describe("mkldnn::_linear_pointwise", (x, w, (64,), (), (), ()), (bf,) * 3 + ("",) * 3, ("",) * 6)
    assert (default.shapes, default.flops) == ("4x8192 @ 8192x64", HEAD)
    assert describe("mkldnn::_linear_pointwise", (x, w, (64,), ()), (bf,) * 3 + ("",), ("",) * 4) is None
