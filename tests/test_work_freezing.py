"""FLOPs and bytes of the oneDNN and MKL calls CPU freezing writes, on real modules:
``tests/fixtures/freezing/record.py`` compiled a small CNN (a 3->16 convolution, stride 2, with
a ReLU; a 16->32 convolution in 2 groups; a global mean; a 32->10 linear) on a 4x3x32x32 batch
with ``torch._inductor.config.freezing`` on CPU with torch 2.5.1, 2.13.0 and 2.14.1 on
2026-11-27, in float32 (MKL's packed linear) and bfloat16 (oneDNN's linear). Every expected
figure is computed here from the model's own sizes."""

from __future__ import annotations

from pathlib import Path

import pytest

from inductor_bench.core.extern_work import op_overload
from inductor_bench.core.graph_work import call_work
from inductor_bench.core.modparse import parse_module

FIXTURES = Path(__file__).parent / "fixtures" / "freezing"
VERSIONS = ["2.5.1", "2.13.0", "2.14.1"]
ELEM = {"float32": 4, "bfloat16": 2}
COMPUTE = {"float32": "fp32", "bfloat16": "fp16/bf16"}

N, H = 4, 32
CONV1 = dict(x=(N, 3, H, H), w=(16, 3, 3, 3), out=(N, 16, H // 2, H // 2))  # stride 2, padding 1
CONV2 = dict(x=(N, 16, H // 2, H // 2), w=(32, 16 // 2, 3, 3), out=(N, 32, H // 2, H // 2))  # groups 2
FC = dict(m=N, k=32, n=10)


def numel(shape: tuple[int, ...]) -> int:
    out = 1
    for d in shape:
        out *= d
    return out


def externs(version: str, dtype: str):
    text = (FIXTURES / f"{version}-{dtype}.py").read_text()
    return [(c, w) for c, w in call_work(parse_module(text), text) if c.extern]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_convolutions_and_linear_counted(version, dtype):
    e = ELEM[dtype]
    (c1, w1), (c2, w2), (fc, wf) = externs(version, dtype)
    assert [op_overload(c.name)[0] for c in (c1, c2)] == ["_convolution_pointwise"] * 2
    assert op_overload(fc.name)[0] == ("_mkl_linear" if dtype == "float32" else "_linear_pointwise")
    for conv, w in ((CONV1, w1), (CONV2, w2)):
        per_out_channel = numel(conv["w"][1:])  # input channels per group x kernel
        assert w.flops == 2.0 * numel(conv["out"]) * per_out_channel
        bias = conv["w"][0]
        assert w.bytes == float((numel(conv["x"]) + numel(conv["w"]) + bias + numel(conv["out"])) * e)
        assert w.compute == COMPUTE[dtype]
    assert wf.flops == 2.0 * FC["m"] * FC["n"] * FC["k"]
    # the input, the weight (its original size, not MKL's padded packed buffer), the bias where
    # the call takes it (bfloat16: oneDNN fuses it; float32: MKL's call passes None and a C++
    # kernel adds it), the result
    bias = FC["n"] if dtype == "bfloat16" else 0
    assert wf.bytes == float((FC["m"] * FC["k"] + FC["n"] * FC["k"] + bias + FC["m"] * FC["n"]) * e)


def test_op_and_overload():
    assert op_overload("torch.ops.mkldnn._convolution_pointwise.binary") == ("_convolution_pointwise", "binary")
    assert op_overload("torch.ops.mkldnn._convolution_pointwise_.binary") == ("_convolution_pointwise_", "binary")
    assert op_overload("torch.ops.mkl._mkl_linear") == ("_mkl_linear", "default")
    assert op_overload("extern_kernels.addmm") == ("addmm", "default")


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_every_generated_kernel_has_its_bytes(version, dtype):
    text = (FIXTURES / f"{version}-{dtype}.py").read_text()
    counted = [(c.name, w.bytes) for c, w in call_work(parse_module(text), text) if not c.extern]
    assert counted and all(b is not None for _, b in counted), counted


def test_what_mkl_returns_is_known_where_torch_asserts_no_shape():
    """torch 2.5 writes no assert after ``_mkl_linear``; the bias add after it, in place on its
    (4, 10) float32 result (read and written) with the (10,) bias, is counted from that shape."""
    text = (FIXTURES / "2.5.1-float32.py").read_text()
    (w,) = [w for c, w in call_work(parse_module(text), text) if c.name == "cpp_fused_addmm_mean_2"]
    assert w.bytes == float(2 * FC["m"] * FC["n"] * 4 + FC["n"] * 4)
