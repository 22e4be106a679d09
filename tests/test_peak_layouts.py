"""A compute ceiling is measured in the operand layout that runs fastest
(``runner/peaks_measure.fastest_layout``): the layouts are the products they say, the fastest
is the one chosen, and on this host the bf16 ceiling is no lower than a linear layer's bf16
GEMM timed in a separate process that uses none of the tool's code."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from inductor_bench.runner import peaks_measure
from inductor_bench.runner.peaks_measure import (
    LAYOUTS,
    ONEDNN,
    ONEDNN_INT8,
    _operands,
    fastest_layout,
    matmul_tflops,
    routes,
)


@pytest.mark.parametrize("layout", routes("cpu"))
def test_each_layout_is_the_product_it_names(layout, monkeypatch):
    """The operands are drawn a then b; the layout transposes them as its name says (oneDNN's
    linear is ``a @ b.T``, on its own blocked copies of them)."""
    torch.manual_seed(0)
    fn = _operands("fp32", 8, "cpu", layout)
    torch.manual_seed(0)
    a, b = torch.randn(8, 8), torch.randn(8, 8)
    want = (a.t() if layout.startswith("a.T") else a) @ (b.t() if "b.T" in layout else b)
    got = fn()
    assert torch.allclose(got.to_dense() if got.is_mkldnn else got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout", routes("cpu", "int8"))
def test_each_int8_route_is_the_integer_product_it_names(layout):
    """``_int_mm`` with ``b`` as stored or transposed, and oneDNN's quantized linear (``a`` as
    uint8 at zero point 128, ``b`` packed as a weight, ``a @ b.T``): each the int8 product. (Small
    values: without VNNI, uint8 x int8 pairs add up in int16, which saturates for full-range
    operands in oneDNN's route and in torch 2.5's ``_int_mm``; the operation count, what the
    ceiling times, is the same.)"""
    torch.manual_seed(0)
    a = torch.randint(-8, 8, (32, 32), dtype=torch.int8)
    b = torch.randint(-8, 8, (32, 32), dtype=torch.int8)
    got = peaks_measure._int8_product(a, b, layout)()
    a64, b64 = a.to(torch.int64), b.to(torch.int64)
    assert torch.equal(got.to(torch.int64), a64 @ (b64.t() if "b.T" in layout else b64))


def test_on_the_host_onednn_is_tried_beside_the_layouts():
    assert routes("cpu") == LAYOUTS + ((ONEDNN,) if torch.backends.mkldnn.is_available() else ())
    int8 = routes("cpu", "int8")
    assert int8[:2] == LAYOUTS[:2]
    assert (ONEDNN_INT8 in int8) == (torch.backends.mkldnn.is_available()
                                     and hasattr(torch.ops.onednn, "qlinear_prepack"))


def test_the_fastest_layout_is_chosen(monkeypatch):
    """Synthetic timings per layout: the one with the fewest seconds is chosen, with them."""
    seconds = {"a @ b": 0.7, "a @ b.T": 0.2, "a.T @ b": 0.09, "a.T @ b.T": 0.8, ONEDNN: 0.1}
    monkeypatch.setattr(peaks_measure, "_operands", lambda kind, n, device, layout="a @ b": layout)
    monkeypatch.setattr(peaks_measure, "best_seconds", lambda fn, device, reps: seconds[fn])
    assert fastest_layout("bf16", "cpu") == ("a.T @ b", 0.09)
    seconds[ONEDNN] = 0.04
    assert fastest_layout("fp32", "cpu") == (ONEDNN, 0.04)


def test_a_route_the_cpu_lacks_is_passed_over(monkeypatch):
    """oneDNN refuses fp16 on a CPU without AVX512-FP16: the layouts through mm still measure."""
    seconds = {"a @ b": 0.7, "a @ b.T": 0.2, "a.T @ b": 0.09, "a.T @ b.T": 0.8}

    def timed(fn, device, reps):
        if fn == ONEDNN:
            raise RuntimeError("mkldnn_linear: fp16 path needs the cpu support avx_ne_convert or avx512_fp16")
        return seconds[fn]

    monkeypatch.setattr(peaks_measure, "routes", lambda device, kind: LAYOUTS + (ONEDNN,))
    monkeypatch.setattr(peaks_measure, "_operands", lambda kind, n, device, layout="a @ b": layout)
    monkeypatch.setattr(peaks_measure, "best_seconds", timed)
    assert fastest_layout("fp16", "cpu") == ("a.T @ b", 0.09)


LINEAR_SIDE = r"""
import json, sys, time
import torch
torch.set_num_threads(int(sys.argv[1]))
x = torch.randn(512, 1024, dtype=torch.bfloat16)
w = torch.randn(1024, 1024, dtype=torch.bfloat16)
f = lambda: torch.nn.functional.linear(x, w)
f()
best = min(((time.perf_counter(), f(), time.perf_counter()) for _ in range(5)), key=lambda t: t[2] - t[0])
print(json.dumps(2.0 * 512 * 1024 * 1024 / (best[2] - best[0]) / 1e12))
"""


@pytest.mark.slow
def test_the_bf16_ceiling_is_no_lower_than_a_linear_layers_gemm():
    """Measured: on a CPU without native bf16 (AVX2), the square ``a @ b`` the ceiling was
    measured with ran at 1.4 GFLOP/s and a linear layer's ``x @ w.T`` at 10 GFLOP/s, so the
    model's GEMMs showed at 850-1,100% of peak. The ceiling is a best of repetitions and so is
    the reference; other work slows either, so the bound is half (before: a tenth)."""
    threads = torch.get_num_threads()
    rate, n, layout = matmul_tflops("bf16", "cpu", 5)
    out = subprocess.run([sys.executable, "-c", LINEAR_SIDE, str(threads)], capture_output=True,
                         text=True, timeout=300, check=True)
    linear = json.loads(out.stdout)
    assert rate >= 0.5 * linear, f"ceiling {rate:.4f} TFLOP/s ({layout}, n={n}); a linear's GEMM {linear:.4f}"
